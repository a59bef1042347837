import { type ReactNode, useState } from "react";
import { ConfirmDialog } from "./confirm-dialog";

interface ActionButtonProps {
  label: string;
  title: string;
  confirmLabel: string;
  children?: ReactNode;
  danger?: boolean;
  testId?: string;
  className?: string;
  run: () => Promise<unknown>;
  onDone?: () => void;
  /** Before the dialog opens: a form inside it starts again from the current values. */
  onOpen?: () => void;
}

/** A button that asks for confirmation in a dialog, runs the action and reports failures in place. */
export function ActionButton({
  label,
  title,
  confirmLabel,
  children,
  danger,
  testId,
  className,
  run,
  onDone,
  onOpen,
}: ActionButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className={className ?? (danger ? "button button-danger-outline" : "button")}
        onClick={() => {
          onOpen?.();
          setOpen(true);
        }}
        data-testid={testId}
      >
        {label}
      </button>
      <ConfirmDialog
        open={open}
        title={title}
        confirmLabel={confirmLabel}
        danger={danger}
        onClose={() => setOpen(false)}
        onConfirm={async () => {
          await run();
          onDone?.();
        }}
      >
        {children}
      </ConfirmDialog>
    </>
  );
}

export function Flash({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p className="flash" role="status">
      {message}
    </p>
  );
}
