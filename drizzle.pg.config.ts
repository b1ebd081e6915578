// drizzle-kit configuration for PostgreSQL (issue 16 §1): migrations are generated from src/store/postgres/schema.ts
// into drizzle-pg/ and committed (`npm run db:generate:pg`); the SQLite ones are drizzle.config.ts → drizzle/.

import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/postgres/schema.ts',
  out: './drizzle-pg',
});
