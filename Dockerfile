# Build: compile the sandboxes' process spawner and port forwarder (C) and TypeScript (swc), then drop dev dependencies.
FROM node:22-bookworm-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends gcc libc6-dev \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci's postinstall builds native/build/ambient-spawner, ambient-forwarder and ambient-dir-reset.
COPY scripts ./scripts
COPY native ./native
RUN npm ci --no-audit --no-fund
COPY .swcrc tsconfig.json ./
COPY src ./src
COPY migrations ./migrations
COPY console ./console
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime: agents run shell commands and git in their workspaces; tini reaps their orphans.
# bubblewrap (with native/build/ambient-forwarder for the API bridge and the egress proxy; socat where it was not built) is the sandbox backend of workers without a
# Docker daemon, e.g. in Kubernetes (docs/operations.md "Deploying on Kubernetes").
FROM node:22-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends bash git ca-certificates tini bubblewrap socat \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/build ./native/build
COPY config ./config
# The only writable place: run workspaces (runs.workspaceRoot = var/workspaces). Kubernetes mounts
# an emptyDir here (read-only root filesystem).
RUN mkdir -p var/workspaces && chown -R node:node var
USER node
EXPOSE 8080 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
