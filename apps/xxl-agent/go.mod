module outrigger.dev/xxl-agent

go 1.26.0
