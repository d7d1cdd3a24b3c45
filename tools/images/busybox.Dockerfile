# Debian's static busybox and its applets as links (sh, sleep, true, hostname, echo, wget…), for test workloads.
FROM scratch
COPY bin/ /bin/
ENV PATH=/bin
CMD ["sh"]
