import { useState } from "react";
import { useT } from "../i18n";

export function CopyButton({ value, label }: { value: string; label?: string }) {
  const t = useT();
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
      <span aria-live="polite">
        {copied === "yes"
          ? t("panel.common.copied")
          : copied === "no"
            ? t("panel.common.select_and_copy")
            : (label ?? t("panel.common.copy"))}
      </span>
    </button>
  );
}
