# The catalog service as a container: the same production bundle `pnpm bundle:server` makes (and
# packages/server/test/deploy.integration.test.ts runs with only Node 20 on PATH), on a slim base.
# The bundle carries its own Node 24 (node_modules/node24); the image needs no other runtime.
# Not built on the project's machines (no Docker daemon there); the steps it runs are tested.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npx --yes pnpm@12.21.0 install --frozen-lockfile \
 && npx --yes pnpm@12.21.0 bundle:server /srv/catalog

FROM debian:bookworm-slim
# prlimit (util-linux) lets serve raise its soft open-file limit to the hard one at start.
RUN apt-get update && apt-get install -y --no-install-recommends util-linux ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /srv/catalog /srv/catalog
RUN useradd --system --home /srv/catalog catalog && mkdir -p /srv/catalog/data && chown catalog /srv/catalog/data
USER catalog
WORKDIR /srv/catalog
# Listen on every interface; on SIGTERM stay up 5 s with /readyz at 503 so the proxy stops sending first.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    SSE_PORT=8081 \
    SHUTDOWN_DELAY_MS=5000 \
    DATABASE_URL=sqlite:/srv/catalog/data/catalog.db
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["/srv/catalog/node_modules/node24/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/srv/catalog/bin/catalog"]
CMD ["serve"]
