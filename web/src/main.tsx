import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.tsx';
import { AuthProvider } from './auth.tsx';
import { createQueryClient } from './query.ts';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('#root missing from index.html');
const queryClient = createQueryClient();
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      {/* Location changes render at once, not as transitions: a filter control shows the URL's value, and a render in
          between (a list's data arriving) would otherwise put the old value back under the user's next key press. */}
      <BrowserRouter useTransitions={false}>
        <AuthProvider>
          <App />
        </AuthProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
