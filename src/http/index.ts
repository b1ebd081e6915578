// Public face of the HTTP layer: the app factory and the server that serves it on 127.0.0.1.

export { createApp, type AppDeps } from './app.ts';
export { startHttpServer, type RunningServer } from './serve.ts';
