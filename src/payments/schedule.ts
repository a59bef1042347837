/** Months between two charges for a frequency (charges per year): 12 → 1, 1 → 12. */
export function monthsPerCycle(frequency: number): number {
  if (frequency !== 1 && frequency !== 12) throw new Error(`not a recurring frequency: ${frequency}`);
  return 12 / frequency;
}

/**
 * The due date of billing cycle `cycle` (0 is the first charge): the same day of month as the
 * first charge, clamped to the month's last day (a gift started on 31 January renews on 28 or 29
 * February, then on 31 March again), at the same time of day.
 */
export function cycleDueDate(start: Date, frequency: number, cycle: number): Date {
  const months = start.getUTCMonth() + cycle * monthsPerCycle(frequency);
  const year = start.getUTCFullYear() + Math.floor(months / 12);
  const month = months % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(start.getUTCDate(), lastDay);
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      start.getUTCHours(),
      start.getUTCMinutes(),
      start.getUTCSeconds(),
      start.getUTCMilliseconds(),
    ),
  );
}

const DAY_MS = 86_400_000;

/** Failed renewals are retried after 2 days twice, then every 5 days; the 6th failure revokes. */
export const MAX_RENEWAL_FAILURES = 6;

export function retryDate(now: Date, failures: number): Date {
  return new Date(now.getTime() + (failures <= 2 ? 2 : 5) * DAY_MS);
}
