import { type FormEvent, useState } from "react";

/** A form's submit handler with its busy flag and the error to show in place. */
export function useSubmit(action: (data: FormData) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    action(new FormData(event.currentTarget))
      .catch((caught: Error) => setError(caught))
      .finally(() => setBusy(false));
  };
  return { busy, error, onSubmit };
}
