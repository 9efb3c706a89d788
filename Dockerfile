# Build stage: dev dependencies compile src/ and projections/ into dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY projections ./projections
# The operator CLI (dist/src/cli) uploads with the TypeScript SDK's sources, compiled with it.
COPY clients/typescript/src ./clients/typescript/src
RUN npm ci --no-audit --no-fund

# Runtime stage: production dependencies and the compiled code only.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
COPY package.json package-lock.json ./
COPY bin ./bin
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY src/database/migrations ./src/database/migrations
EXPOSE 3000
CMD ["node", "dist/src/main.js"]
