import { Component, type ErrorInfo, type ReactNode } from 'react';

/** Keeps one page's rendering failure from blanking the whole portal (header and navigation stay usable). */
export class ErrorBoundary extends Component<{ children: ReactNode; resetKey: string }, { error: Error | null; key: string }> {
  override state: { error: Error | null; key: string } = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  static getDerivedStateFromProps(props: { resetKey: string }, state: { error: Error | null; key: string }) {
    // Navigating elsewhere clears the error.
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error('Vigil portal: a page failed to render', error, info.componentStack);
  }

  override render() {
    if (this.state.error) {
      return (
        <div className="error-box" role="alert">
          <h1>This page could not be shown</h1>
          <p>{this.state.error.message}</p>
          <p>Reload the page, or choose another page from the navigation. The REST API and the vigil CLI show the same data.</p>
        </div>
      );
    }
    return this.props.children;
  }
}
