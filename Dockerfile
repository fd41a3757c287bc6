# One image for every fencer process: `docker run IMAGE sink ...`,
# `... coordinator ...`, `... health ADDR`. Credentials are never baked in:
# compose mounts them as secrets at run time.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
# npm ci builds the workspaces (the root's prepare script runs tsc -b); the
# prune then drops the compiler, linters and test tools.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app /app
# Named volumes take the owner of the directory they are mounted over.
RUN mkdir -p /data && chown node:node /data
USER node
ENTRYPOINT ["node", "/app/cli/bin/fencer.js"]
