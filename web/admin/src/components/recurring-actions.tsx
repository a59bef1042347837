import { type ReactNode, useId, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import type { Donation } from "../api/types";
import { frequencyInSentence, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql } from "../app/use-query";
import { useI18n } from "../i18n";
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
  constructor(
    readonly problem: string,
    message: string,
  ) {
    super(message);
  }
}

async function reportingField<T>(field: string, nothingChanged: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (caught) {
    const problem = caught instanceof ApiError ? caught.fieldErrors()[field] : undefined;
    throw problem ? new FieldProblem(problem, nothingChanged) : caught;
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
  const { t } = useI18n();
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
  const every = (value: number | null) => frequencyInSentence(t, value);
  const next = (result: RecurringResult) => (result.next_charge_date ? fmt.dateTime(result.next_charge_date) : "—");
  // Each action's run: the server's problem with its field shows under it; the dialog stays open.
  const attempt = async (field: string, action: () => Promise<string>) => {
    setProblem(undefined);
    try {
      outcome.current = await reportingField(field, t("panel.recurring.nothing_changed"), action);
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
        label={t("panel.recurring.change_amount")}
        title={t("panel.recurring.change_amount_title")}
        confirmLabel={t("panel.recurring.change_amount")}
        testId="change-amount"
        onOpen={() => {
          setProblem(undefined);
          setAmountText(donation.amount.toFixed(2));
        }}
        run={() =>
          attempt("amount", async () => {
            const typed = amountText.trim().replace(",", ".");
            if (!/^\d+(\.\d+)?$/.test(typed)) {
              throw new FieldProblem(t("panel.recurring.enter_amount"), t("panel.recurring.nothing_changed"));
            }
            const { changeDonationAmount: result } = await gql<{ changeDonationAmount: RecurringResult }>(
              CHANGE_AMOUNT,
              { id: donation.id, amount: Number(typed) },
            );
            return t("panel.recurring.amount_changed", {
              amount: money(result.amount),
              every: every(result.frequency),
              next: next(result),
            });
          })
        }
        onDone={done}
      >
        <p>
          {t("panel.recurring.change_amount_body", {
            supporter,
            amount: money(donation.amount),
            every: every(donation.frequency),
          })}
        </p>
        <DialogField
          id={amountId}
          label={t("panel.recurring.new_amount", { currency: donation.currency })}
          problem={problem}
          field="amount"
        >
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
          label={t("panel.recurring.change_frequency")}
          title={t("panel.recurring.change_frequency_title")}
          confirmLabel={t("panel.recurring.change_frequency")}
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
              return t("panel.recurring.frequency_changed", { every: every(result.frequency), next: next(result) });
            })
          }
          onDone={done}
        >
          <p>
            {t("panel.recurring.change_frequency_body", {
              amount: money(donation.amount),
              every: every(donation.frequency),
            })}
          </p>
          <DialogField id={frequencyId} label={t("panel.recurring.renews")} problem={problem} field="frequency">
            <select
              id={frequencyId}
              value={frequency}
              onChange={(event) => setFrequency(Number(event.target.value))}
              aria-invalid={problem ? true : undefined}
              aria-describedby={described(frequencyId, false)}
              data-testid="new-frequency"
            >
              <option value={12}>{t("panel.frequency.monthly")}</option>
              <option value={1}>{t("panel.frequency.yearly")}</option>
            </select>
          </DialogField>
        </ActionButton>
      )}
      {active && !paused && (
        <ActionButton
          label={t("panel.recurring.pause")}
          title={t("panel.recurring.pause_title")}
          confirmLabel={t("panel.recurring.pause")}
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
              return t("panel.recurring.paused", {
                until: result.paused_until ? fmt.dateTime(result.paused_until) : "—",
              });
            })
          }
          onDone={done}
        >
          <p>{t("panel.recurring.pause_body")}</p>
          <DialogField
            id={cyclesId}
            label={t("panel.recurring.renewals_to_skip")}
            hint={t("panel.recurring.next_charge_today", {
              date: donation.next_charge_date ? fmt.dateTime(donation.next_charge_date) : "—",
            })}
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
                  {donation.frequency === 1
                    ? t("panel.recurring.years", { count })
                    : t("panel.recurring.months", { count })}
                </option>
              ))}
            </select>
          </DialogField>
        </ActionButton>
      )}
      {active && paused && (
        <ActionButton
          label={t("panel.recurring.resume")}
          title={t("panel.recurring.resume_title")}
          confirmLabel={t("panel.recurring.resume")}
          testId="resume-donation"
          onOpen={() => setProblem(undefined)}
          run={() =>
            attempt("id", async () => {
              const { resumeDonation: result } = await gql<{ resumeDonation: RecurringResult }>(RESUME, {
                id: donation.id,
              });
              return t("panel.recurring.resumed", { next: next(result) });
            })
          }
          onDone={done}
        >
          <p>
            {t("panel.recurring.resume_body", {
              until: donation.paused_until ? fmt.dateTime(donation.paused_until) : "—",
            })}
          </p>
        </ActionButton>
      )}
      <ActionButton
        label={t("panel.recurring.cancel")}
        title={t("panel.recurring.cancel_title")}
        confirmLabel={t("panel.recurring.cancel_confirm")}
        danger
        testId="cancel-donation"
        onOpen={() => {
          setProblem(undefined);
          setReason("");
        }}
        run={() =>
          attempt("reason", async () => {
            await gql(CANCEL, { id: donation.id, reason: reason.trim() || null });
            return t("panel.recurring.cancelled");
          })
        }
        onDone={done}
      >
        <p>
          {t("panel.recurring.cancel_body", {
            supporter,
            amount: money(donation.amount),
            every: every(donation.frequency),
          })}
        </p>
        <DialogField
          id={reasonId}
          label={t("panel.recurring.reason")}
          hint={t("panel.recurring.reason_hint")}
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
