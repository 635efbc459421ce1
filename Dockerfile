# The image the Kubernetes manifests in deploy/kubernetes/ run: the ehrgym CLI on Node 20.
# (Not built in this repository's CI: no container engine there.)
FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
# npm ci runs `prepare`, which compiles the CLI into dist/.
RUN npm ci --no-audit --no-fund && npm cache clean --force
ENV NODE_ENV=production
USER node
EXPOSE 8000
ENTRYPOINT ["node", "/app/bin/ehrgym.js"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
