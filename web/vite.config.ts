// Vite config of the Vigil portal: `npm run build:web` writes web/dist, which `vigil serve` serves at `/`.
// No inline scripts or styles end up in the build (a strict `default-src 'self'` CSP applies to the portal).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    // Keep every asset a file: inlined data: URIs would need a CSP exception.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    // `vite --config web/vite.config.ts` for development, against a `vigil serve` on the default port.
    proxy: {
      '/api': { target: 'http://127.0.0.1:8080', changeOrigin: false },
      '/consent': { target: 'http://127.0.0.1:8080', changeOrigin: false },
    },
  },
});
