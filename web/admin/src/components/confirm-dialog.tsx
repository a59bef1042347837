import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { useT } from "../i18n";
import { InlineError } from "./states";

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  /** Runs the action; a thrown error is shown in the dialog, which stays open. */
  onConfirm: () => Promise<unknown> | unknown;
  onClose: () => void;
}

/** A modal confirmation on the native <dialog>: focus moves in, Escape cancels, focus returns to the opener. */
export function ConfirmDialog(props: ConfirmDialogProps) {
  // Mounted only while open, so the page holds at most one dialog.
  return props.open ? <OpenDialog {...props} /> : null;
}

function OpenDialog({ title, children, confirmLabel, danger, onConfirm, onClose }: ConfirmDialogProps) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const opener = document.activeElement;
    ref.current?.showModal();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);

  const close = () => {
    if (!busy) onClose();
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (caught) {
      setBusy(false);
      setError(caught as Error);
    }
  };

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      data-testid="confirm-dialog"
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div className="dialog-body">{children}</div>
      <InlineError error={error} />
      <div className="dialog-actions">
        <button type="button" className="button" onClick={close} disabled={busy}>
          {t("panel.common.cancel")}
        </button>
        <button
          type="button"
          className={danger ? "button button-danger" : "button button-primary"}
          onClick={confirm}
          disabled={busy}
          data-testid="confirm-dialog-confirm"
        >
          {busy ? t("panel.common.working") : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
