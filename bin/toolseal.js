#!/usr/bin/env node
// The repository's launcher: runs the CLI from src/ through tsx's loader (no build step), for the tests and
// `node bin/toolseal.js` in a checkout. The published package's bin is the built dist/cli/main.js, which needs no tsx.
// The repository's tsconfig is named explicitly: run from another folder, tsx would not find it and would compile the
// pages' JSX for React instead of hono/jsx.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../src/cli/main.ts');
