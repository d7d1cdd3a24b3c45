# The pod sandbox: our static pause program (tools/kube/cmd/pause).
FROM scratch
COPY pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
