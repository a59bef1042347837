import { type ReactNode, useId, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import type { Donation } from "../api/types";
import { frequencyLabel, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql } from "../app/use-query";
import { ActionButton } from "./action-button";

const RESULT = "id state amount frequency next_charge_date paused_until cancelled_by cancel_reason";
const CHANGE_AMOUNT = `mutation ChangeDonationAmount($id: ID!, $amount: Float!) {
  changeDonationAmount(id: $id, amount: $amount) { ${RESULT} }
}`;
const CHANGE_FREQUENCY = `mutation ChangeDonationFrequency($id: ID!, $frequency: Int!) {
  changeDonationFrequency(id: $id, frequency: $frequency) { ${RESULT} }
}`;
const PAUSE = `mutation PauseDonation($id: ID!, $cycles: Int!) { pauseDonation(id: $id, cycles: $cycles) { ${RESULT} } }`;
const RESUME = `mutation ResumeDonation($id: ID!) { resumeDonation(id: $id) { ${RESULT} } }`;
const CANCEL = `mutation CancelDonation($id: ID!, $reason: String) { cancelDonation(id: $id, reason: $reason) { ${RESULT} } }`;

const MAX_PAUSE_CYCLES = 3;
const MAX_CANCEL_REASON = 500;

interface RecurringResult {
  amount: number;
  frequency: number;
  next_charge_date: string | null;
  paused_until: string | null;
}

export type RecurringDonation = Pick<Donation, "id" | "state" | "amount" | "currency" | "frequency"> & {
  next_charge_date: string | null;
  paused_until: string | null;
};

/** A recurring gift paused now (its pause ends in the future). */
export const isPaused = (donation: Pick<RecurringDonation, "paused_until">, now = Date.now()) =>
  donation.paused_until !== null && new Date(donation.paused_until).getTime() > now;

/** The server's problem with one field: shown under that field, while the dialog says nothing changed. */
class FieldProblem extends Error {
  constructor(readonly problem: string) {
    super("Nothing was changed; see the field above.");
  }
}

async function reportingField<T>(field: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (caught) {
    const problem = caught instanceof ApiError ? caught.fieldErrors()[field] : undefined;
    throw problem ? new FieldProblem(problem) : caught;
  }
}

/** One labelled control of a dialog, with its hint and the server's problem with it. */
function DialogField({
  id,
  label,
  hint,
  problem,
  field,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  problem: string | undefined;
  field: string;
  children: ReactNode;
}) {
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      {children}
      {problem && (
        <p className="field-error" id={`${id}-error`} data-field-error={field}>
          {problem}
        </p>
      )}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

/**
 * The admin's changes to a recurring gift, the same services as the donor portal: amount (active or
 * past_due), monthly ↔ yearly and pause/resume (active), cancel with an optional reason. Owners and admins only.
 */
export function RecurringActions({
  donation,
  supporter,
  onDone,
}: {
  donation: RecurringDonation;
  supporter: string;
  onDone: (message: string) => void;
}) {
  const { canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  const ids = useId();
  const [amountText, setAmountText] = useState("");
  const [frequency, setFrequency] = useState(1);
  const [cycles, setCycles] = useState(1);
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | undefined>();
  // What the last action did, in words, for the page's flash once its dialog closes.
  const outcome = useRef("");

  const recurring = donation.frequency === 1 || donation.frequency === 12;
  if (!canWrite || !recurring) return null;
  const active = donation.state === "active";
  if (!active && donation.state !== "past_due") return null;
  const paused = isPaused(donation);
  const money = (amount: number) => fmt.money(amount, donation.currency);
  const every = (value: number | null) => frequencyLabel(value).toLowerCase();
  const next = (result: RecurringResult) => (result.next_charge_date ? fmt.dateTime(result.next_charge_date) : "—");
  // Each action's run: the server's problem with its field shows under it; the dialog stays open.
  const attempt = async (field: string, action: () => Promise<string>) => {
    setProblem(undefined);
    try {
      outcome.current = await reportingField(field, action);
    } catch (caught) {
      if (caught instanceof FieldProblem) setProblem(caught.problem);
      throw caught;
    }
  };
  const described = (id: string, hint: boolean) => (problem ? `${id}-error` : hint ? `${id}-hint` : undefined);
  const done = () => onDone(outcome.current);

  const amountId = `${ids}-amount`;
  const frequencyId = `${ids}-frequency`;
  const cyclesId = `${ids}-cycles`;
  const reasonId = `${ids}-reason`;
  const other = donation.frequency === 12 ? 1 : 12;

  return (
    <>
      <ActionButton
        label="Change amount"
        title="Change the amount of this recurring donation?"
        confirmLabel="Change amount"
        testId="change-amount"
        onOpen={() => {
          setProblem(undefined);
          setAmountText(donation.amount.toFixed(2));
        }}
        run={() =>
          attempt("amount", async () => {
            const typed = amountText.trim().replace(",", ".");
            if (!/^\d+(\.\d+)?$/.test(typed)) throw new FieldProblem("Enter an amount, such as 10 or 10.50.");
            const { changeDonationAmount: result } = await gql<{ changeDonationAmount: RecurringResult }>(
              CHANGE_AMOUNT,
              { id: donation.id, amount: Number(typed) },
            );
            return `Amount changed to ${money(result.amount)} ${every(result.frequency)}, from the next renewal on (${next(result)}).`;
          })
        }
        onDone={done}
      >
        <p>
          {supporter} gives {money(donation.amount)} {every(donation.frequency)}. The new amount is charged from the
          next renewal on, within the campaign's rules; the donor gets an email confirming it.
        </p>
        <DialogField id={amountId} label={`New amount (${donation.currency})`} problem={problem} field="amount">
          <input
            id={amountId}
            className="input"
            inputMode="decimal"
            autoComplete="off"
            value={amountText}
            onChange={(event) => setAmountText(event.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby={described(amountId, false)}
            data-testid="new-amount"
          />
        </DialogField>
      </ActionButton>
      {active && (
        <ActionButton
          label="Change frequency"
          title="Change how often this donation renews?"
          confirmLabel="Change frequency"
          testId="change-frequency"
          onOpen={() => {
            setProblem(undefined);
            setFrequency(other);
          }}
          run={() =>
            attempt("frequency", async () => {
              const { changeDonationFrequency: result } = await gql<{ changeDonationFrequency: RecurringResult }>(
                CHANGE_FREQUENCY,
                { id: donation.id, frequency },
              );
              return `Now ${every(result.frequency)}: the next charge is on ${next(result)}.`;
            })
          }
          onDone={done}
        >
          <p>
            The gift of {money(donation.amount)} is {every(donation.frequency)} today. The next renewal is planned again
            on the new schedule (after a pause, not before it ends); the donor gets an email confirming it.
          </p>
          <DialogField id={frequencyId} label="Renews" problem={problem} field="frequency">
            <select
              id={frequencyId}
              value={frequency}
              onChange={(event) => setFrequency(Number(event.target.value))}
              aria-invalid={problem ? true : undefined}
              aria-describedby={described(frequencyId, false)}
              data-testid="new-frequency"
            >
              <option value={12}>Monthly</option>
              <option value={1}>Yearly</option>
            </select>
          </DialogField>
        </ActionButton>
      )}
      {active && !paused && (
        <ActionButton
          label="Pause"
          title="Pause this recurring donation?"
          confirmLabel="Pause"
          testId="pause-donation"
          onOpen={() => {
            setProblem(undefined);
            setCycles(1);
          }}
          run={() =>
            attempt("cycles", async () => {
              const { pauseDonation: result } = await gql<{ pauseDonation: RecurringResult }>(PAUSE, {
                id: donation.id,
                cycles,
              });
              return `Paused: no renewal is charged before ${result.paused_until ? fmt.dateTime(result.paused_until) : "—"}.`;
            })
          }
          onDone={done}
        >
          <p>
            The next renewals are skipped: nothing is charged until the pause ends, then the gift carries on. It can be
            resumed earlier. The donor gets an email confirming it.
          </p>
          <DialogField
            id={cyclesId}
            label="Renewals to skip"
            hint={`Next charge today: ${donation.next_charge_date ? fmt.dateTime(donation.next_charge_date) : "—"}`}
            problem={problem}
            field="cycles"
          >
            <select
              id={cyclesId}
              value={cycles}
              onChange={(event) => setCycles(Number(event.target.value))}
              aria-invalid={problem ? true : undefined}
              aria-describedby={described(cyclesId, true)}
              data-testid="pause-cycles"
            >
              {Array.from({ length: MAX_PAUSE_CYCLES }, (_, index) => index + 1).map((count) => (
                <option key={count} value={count}>
                  {count}{" "}
                  {donation.frequency === 1 ? (count === 1 ? "year" : "years") : count === 1 ? "month" : "months"}
                </option>
              ))}
            </select>
          </DialogField>
        </ActionButton>
      )}
      {active && paused && (
        <ActionButton
          label="Resume"
          title="Resume this recurring donation now?"
          confirmLabel="Resume"
          testId="resume-donation"
          onOpen={() => setProblem(undefined)}
          run={() =>
            attempt("id", async () => {
              const { resumeDonation: result } = await gql<{ resumeDonation: RecurringResult }>(RESUME, {
                id: donation.id,
              });
              return `Resumed: the next charge is on ${next(result)}.`;
            })
          }
          onDone={done}
        >
          <p>
            The pause ends now (it would have ended on{" "}
            {donation.paused_until ? fmt.dateTime(donation.paused_until) : "—"}): the next renewal is the schedule's
            next date. The donor gets an email confirming it.
          </p>
        </ActionButton>
      )}
      <ActionButton
        label="Cancel recurring donation"
        title="Cancel this recurring donation?"
        confirmLabel="Cancel donation"
        danger
        testId="cancel-donation"
        onOpen={() => {
          setProblem(undefined);
          setReason("");
        }}
        run={() =>
          attempt("reason", async () => {
            await gql(CANCEL, { id: donation.id, reason: reason.trim() || null });
            return "Recurring donation cancelled: no further charges.";
          })
        }
        onDone={done}
      >
        <p>
          {supporter} will not be charged {money(donation.amount)} {every(donation.frequency)} any more. Past payments
          stay. The donor gets an email saying the organization stopped the gift.
        </p>
        <DialogField
          id={reasonId}
          label="Reason (optional)"
          hint="Kept with the donation and quoted in the email to the donor."
          problem={problem}
          field="reason"
        >
          <textarea
            id={reasonId}
            rows={3}
            maxLength={MAX_CANCEL_REASON}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby={described(reasonId, true)}
            data-testid="cancel-reason"
          />
        </DialogField>
      </ActionButton>
    </>
  );
}
