// drizzle-kit configuration: migrations are generated from src/store/schema.ts into drizzle/ and committed.

import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/store/schema.ts',
  out: './drizzle',
});
