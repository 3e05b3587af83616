import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the service at /console (src/plugins/console.ts); no inline script or
// style in the output, so it runs under a strict Content-Security-Policy.
export default defineConfig({
  root: __dirname,
  base: '/console/',
  plugins: [react()],
  build: { outDir: '../dist/console', emptyOutDir: true, assetsInlineLimit: 0, modulePreload: { polyfill: false } },
});
