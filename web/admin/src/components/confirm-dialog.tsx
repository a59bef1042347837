import { type ReactNode, useEffect, useId, useRef, useState } from "react";
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

/** A modal confirmation on the native <dialog>: focus moves in, Escape cancels, focus returns. */
export function ConfirmDialog({ open, title, children, confirmLabel, danger, onConfirm, onClose }: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement;
      setError(null);
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  const close = () => {
    if (busy) return;
    onClose();
    const previous = opener.current;
    if (previous instanceof HTMLElement && previous.isConnected) previous.focus();
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setBusy(false);
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
          Cancel
        </button>
        <button
          type="button"
          className={danger ? "button button-danger" : "button button-primary"}
          onClick={confirm}
          disabled={busy}
          data-testid="confirm-dialog-confirm"
        >
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
