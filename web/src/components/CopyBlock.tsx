// A value to copy into another console or page (protection set-up values, a sign-in code), keyboard-usable.
import { useState } from 'react';

/** A value to copy into another console: its visible label, a focusable code block named by it, and a Copy button. */
export function CopyBlock({ label, value, id: given }: { label: string; value: string; /** Element id of the label (default from it). */ id?: string }) {
  const [copied, setCopied] = useState('');
  const id = given ?? `copy-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <div className="copy-field">
      <div className="small muted" id={id}>
        {label}
      </div>
      <div className="copy-block">
        <pre className="code-block" tabIndex={0} aria-labelledby={id}>
          <code>{value}</code>
        </pre>
        <button
          type="button"
          className="secondary"
          onClick={() =>
            void navigator.clipboard?.writeText(value).then(
              () => setCopied(`${label} copied.`),
              () => setCopied('Copying is not allowed here: select the text instead.'),
            )
          }
        >
          Copy<span className="visually-hidden"> {label}</span>
        </button>
      </div>
      <span role="status" className="small muted">
        {copied}
      </span>
    </div>
  );
}
