# The local stand-in for the official node image (NODE_IMAGE of local builds); tools/images/build.sh
# prepares the context: rootfs.tar (mmdebstrap minbase) and usr/local (node, npm, npx).
FROM scratch
ADD rootfs.tar /
COPY usr/local/ /usr/local/
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["node"]
