import { Link } from 'react-router';
import { useTitle } from '../hooks.ts';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. Go to the <Link to="/">dashboard</Link>.
      </p>
    </>
  );
}
