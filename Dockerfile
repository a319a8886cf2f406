# Build stage: every dependency (the compiler is a dev dependency), then `npm run build` into dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json mikro-orm.config.ts ./
COPY scripts ./scripts
COPY src ./src
COPY rest ./rest
COPY schema ./schema
COPY console ./console
RUN npm run build

# Runtime stage: production dependencies and the build, no compiler and no sources.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production PORT=8080 DATA_DIR=/app/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The launchers: `npm start` / `npm run start:cluster` (scripts/start.mjs) and the wks command line (bin/wks.mjs) run dist/.
COPY scripts/start.mjs ./scripts/start.mjs
COPY bin ./bin
# The service never runs as root: it owns only its data directory.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
# Ready = the database answers and no migration is pending. Slim images have no curl: node asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 (no npm or shell in between), so the SIGTERM of `docker stop` reaches the service's drain.
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
