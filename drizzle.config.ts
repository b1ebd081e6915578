// drizzle-kit configuration: migrations are generated from src/store/sqlite/schema.ts into drizzle/ and committed.

import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/store/sqlite/schema.ts',
  out: './drizzle',
});
