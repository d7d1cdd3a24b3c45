# The agent sidecar the injector adds, played by our static stand-in (tools/kube/cmd/stand-in-agent).
FROM scratch
COPY stand-in-agent /stand-in-agent
USER 65532:65532
EXPOSE 9999
ENTRYPOINT ["/stand-in-agent"]
