import { useState } from "react";

export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("yes");
    } catch {
      setCopied("no");
    }
    window.setTimeout(() => setCopied(null), 2000);
  };
  return (
    <button type="button" className="button button-small" onClick={copy}>
      <span aria-live="polite">{copied === "yes" ? "Copied" : copied === "no" ? "Select and copy" : label}</span>
    </button>
  );
}
