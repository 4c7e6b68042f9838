# syntax=docker/dockerfile:1
# Build stage: bundle the server with esbuild (scripts/build.js) using the dev dependencies, then keep only
# production ones. Types are checked by `npm test` and CI, not here.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY console ./console
RUN npm run build && npm prune --omit=dev --ignore-scripts

# Runtime stage: no compiler, no dev dependencies, not root.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
COPY package.json ./
# The gateway's charge journal (gateway.chargeJournalDir = data/charges): writable by the runtime user.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1's child-free entry: SIGTERM reaches Genway's graceful shutdown directly.
# A young generation of 8 MB a semi-space and an old generation configured at 64 MB keep long streams out of
# back-to-back full collections (docs/decisions.md).
ENTRYPOINT ["node", "--max-semi-space-size=8", "--initial-old-space-size=64", "dist/main.js"]
CMD ["serve"]
