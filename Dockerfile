# syntax=docker/dockerfile:1
# Vigil runs compiled JavaScript (dist/, by `npm run build`) and serves the built portal (web/dist). Node 24 LTS, the
# Node the tests run on (package.json pins it as a development dependency).
# Build:  docker build -t vigil .
# Run:    see docs/deployment.md (SQLite in the /data volume, or PostgreSQL through DATABASE_URL).

# Build: the TypeScript into dist/ and the portal into web/dist (both need the development dependencies).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY emulator ./emulator
COPY web ./web
RUN npm run build

# Runtime dependencies only (better-sqlite3 ships its prebuilt binary in the npm package: nothing compiles).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
RUN groupadd --system --gid 10001 vigil \
 && useradd --system --uid 10001 --gid vigil --create-home --home-dir /home/vigil --shell /usr/sbin/nologin vigil \
 && mkdir /data \
 && chown vigil:vigil /data \
 && chmod 0700 /data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY docs ./docs
ENV VIGIL_DATA_DIR=/data \
    VIGIL_HOST=0.0.0.0
USER vigil
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
# Liveness of `vigil serve`. `vigil worker` serves no HTTP: run workers with --no-healthcheck (compose.yaml disables it).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.VIGIL_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/vigil.mjs"]
CMD ["serve"]
