# syntax=docker/dockerfile:1
# Vigil runs its TypeScript through tsx, a runtime dependency: the only build step is the web portal (stage `web`).
# Build:  docker build -t vigil .
# Run:    see docs/deployment.md (SQLite in the /data volume, or PostgreSQL through DATABASE_URL).

# The portal: React built by Vite into web/dist, served by `vigil serve` at `/` (devDependencies only here).
FROM node:22-bookworm-slim AS web
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY web ./web
RUN npm run build:web

FROM node:22-bookworm-slim AS deps
WORKDIR /app
# better-sqlite3 downloads a prebuilt binary; python3, make and g++ are for its node-gyp fallback when none fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# `prepare` builds the portal, which needs the devDependencies: the `web` stage does it instead.
RUN npm pkg delete scripts.prepare \
 && npm ci --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
WORKDIR /app
RUN groupadd --system --gid 10001 vigil \
 && useradd --system --uid 10001 --gid vigil --create-home --home-dir /home/vigil --shell /usr/sbin/nologin vigil \
 && mkdir /data \
 && chown vigil:vigil /data \
 && chmod 0700 /data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY emulator ./emulator
COPY docs ./docs
COPY --from=web /app/web/dist ./web/dist
ENV VIGIL_DATA_DIR=/data \
    VIGIL_HOST=0.0.0.0
USER vigil
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
# Liveness of `vigil serve`. `vigil worker` serves no HTTP: run workers with --no-healthcheck (compose.yaml disables it).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.VIGIL_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# --optimize-for-size: as bin/vigil.mjs's shebang (flat memory while collecting large tenants; bench/README.md).
ENTRYPOINT ["node", "--optimize-for-size", "bin/vigil.mjs"]
CMD ["serve"]
