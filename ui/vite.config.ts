// The bundle plumb server embeds (crates/plumb-server/build.rs reads ui/dist).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    // dist/.gitignore keeps the directory in Git; scripts/ui-build writes it back after a build.
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: { '/api': { target: process.env.PLUMB_SERVER ?? 'https://localhost:8080', secure: false } },
  },
});
