# syntax=docker/dockerfile:1
# The image of each service, from the repository root:
#   docker build --build-arg APP=injector -t ghcr.io/outrigger/injector .        (APP: injector | rbac-syncer | cert-manager)
# and its version (the release tag, else package version + commit): --build-arg VERSION=$(tools/images/build-version.sh)
# Behind a TLS-intercepting proxy, pass its CA for npm as a build secret (never stored in a layer):
#   docker build --secret id=extra-ca,src=/path/to/ca.pem --build-arg APP=injector .
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Builds all three services once; the three images share this stage.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
COPY apps/injector/package.json apps/injector/
COPY apps/rbac-syncer/package.json apps/rbac-syncer/
COPY apps/cert-manager/package.json apps/cert-manager/
# The CLI is a workspace too (npm ci links its bin); every image carries its build, which the Helm chart's test runs.
COPY apps/cli/package.json apps/cli/
COPY apps/cli/bin apps/cli/bin/
COPY libs/admission/package.json libs/admission/
COPY libs/agent-profiles/package.json libs/agent-profiles/
COPY libs/sidecar/package.json libs/sidecar/
COPY libs/control-plane/package.json libs/control-plane/
COPY libs/install/package.json libs/install/
COPY libs/kube/package.json libs/kube/
COPY libs/pki/package.json libs/pki/
COPY libs/service/package.json libs/service/
# npm's download cache is a cache mount: reused by the next build, never part of a layer.
RUN --mount=type=secret,id=extra-ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi; \
    npm ci --no-audit --no-fund --loglevel=error
COPY . .
RUN npx nx run-many -t build -p injector,rbac-syncer,cert-manager,cli --skip-nx-cache --outputStyle=static \
 && npm prune --omit=dev --no-audit --no-fund --loglevel=error
# The build's version, written beside each service's main.js (the injector stamps it on every pod it
# injects); after the build, so a new version rebuilds only this layer. Without it a service reports
# its package version with +dev.
ARG VERSION=""
RUN if [ -n "$VERSION" ]; then for app in injector rbac-syncer cert-manager; do printf '%s\n' "$VERSION" > "dist/apps/$app/VERSION"; done; fi

FROM ${NODE_IMAGE} AS runtime
ARG APP
ENV NODE_ENV=production
# Production dependencies only (pruned above); workspace packages resolve through node_modules symlinks to libs/*.
COPY --from=build /src/package.json /app/
COPY --from=build /src/node_modules /app/node_modules
# The built libraries the services import (not the test harness, libs/control-plane).
COPY --from=build /src/libs/admission/package.json /app/libs/admission/
COPY --from=build /src/libs/admission/dist /app/libs/admission/dist
COPY --from=build /src/libs/agent-profiles/package.json /app/libs/agent-profiles/
COPY --from=build /src/libs/agent-profiles/dist /app/libs/agent-profiles/dist
COPY --from=build /src/libs/sidecar/package.json /app/libs/sidecar/
COPY --from=build /src/libs/sidecar/dist /app/libs/sidecar/dist
COPY --from=build /src/libs/install/package.json /app/libs/install/
COPY --from=build /src/libs/install/dist /app/libs/install/dist
COPY --from=build /src/libs/kube/package.json /app/libs/kube/
COPY --from=build /src/libs/kube/dist /app/libs/kube/dist
COPY --from=build /src/libs/pki/package.json /app/libs/pki/
COPY --from=build /src/libs/pki/dist /app/libs/pki/dist
COPY --from=build /src/libs/service/package.json /app/libs/service/
COPY --from=build /src/libs/service/dist /app/libs/service/dist
# `outrigger check` for the chart's test (node /app/apps/cli/dist/main.js check): the CLI's build and package.json (its version).
COPY --from=build /src/apps/cli/package.json /app/apps/cli/
COPY --from=build /src/apps/cli/dist /app/apps/cli/dist
# This service's build output and its package.json (its version).
COPY --from=build /src/apps/${APP}/package.json /app/apps/${APP}/
COPY --from=build /src/dist/apps/${APP} /app/dist/apps/${APP}
WORKDIR /app/dist/apps/${APP}
USER 65532:65532
STOPSIGNAL SIGTERM
CMD ["node", "main.js"]
