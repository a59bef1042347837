import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  type Scale,
  Tooltip,
} from "chart.js";
import { useEffect, useRef } from "react";
import type { Formatters } from "../app/format";
import type { Translate } from "../i18n";

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  Legend,
  Filler,
);

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const ACCENT = "#4f46e5";
const TEAL = "#0d9488";

/**
 * A money axis from zero in whole currency units, as its labels show them: with no gift (or a few cents)
 * it reads €0 and €1, never €0 €0 … €1 €1 from fractional steps rounded alike. The labels drawn are
 * kept on the canvas (data-money-ticks), for those who cannot read its pixels: the browser tests.
 */
const moneyAxis = (fmt: Formatters) => ({
  beginAtZero: true,
  ticks: { precision: 0, callback: (value: number | string) => fmt.moneyShort(Number(value)) },
  afterTickToLabelConversion: (scale: Scale) => {
    scale.chart.canvas.dataset.moneyTicks = JSON.stringify(scale.ticks.map((tick) => tick.label));
  },
});

function useChart(config: ChartConfiguration) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const key = JSON.stringify(config.data);
  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuild only when the data changes.
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [key]);
  return canvas;
}

export interface DonationsPoint {
  period: string;
  amount: number;
  count: number;
}

interface ChartProps<Point> {
  points: Point[];
  fmt: Formatters;
  t: Translate;
  /** The panel's language (Chart.js formats the count axis with it). */
  locale: string;
}

export function DonationsChart({ points, fmt, t, locale }: ChartProps<DonationsPoint>) {
  const canvas = useChart({
    type: "bar",
    data: {
      labels: points.map((point) => fmt.month(point.period)),
      datasets: [
        {
          type: "bar",
          label: t("panel.dashboard.raised"),
          data: points.map((point) => point.amount),
          backgroundColor: ACCENT,
          borderRadius: 4,
          yAxisID: "y",
          order: 2,
        },
        {
          type: "line",
          label: t("panel.dashboard.donations"),
          data: points.map((point) => point.count),
          borderColor: TEAL,
          backgroundColor: TEAL,
          tension: 0.3,
          yAxisID: "count",
          order: 1,
        },
      ],
    },
    options: {
      locale,
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: "index", intersect: false },
      font: { family: FONT },
      scales: {
        y: moneyAxis(fmt),
        count: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, ticks: { precision: 0 } },
        x: { grid: { display: false } },
      },
      plugins: {
        legend: { position: "bottom" },
        tooltip: {
          callbacks: {
            label: (item) =>
              item.dataset.yAxisID === "count"
                ? ` ${t("panel.dashboard.donations_count", { count: Number(item.raw), formatted: item.formattedValue })}`
                : ` ${t("panel.dashboard.amount_raised", { amount: fmt.money(Number(item.raw)) })}`,
          },
        },
      },
    },
  } as ChartConfiguration);
  const total = points.reduce((sum, point) => sum + point.amount, 0);
  return (
    <canvas
      ref={canvas}
      role="img"
      aria-label={t("panel.dashboard.donations_chart_label", { total: fmt.money(total), months: points.length })}
    />
  );
}

export interface RecurringPoint {
  period: string;
  monthly: number;
  yearly: number;
}

export function RecurringChart({ points, fmt, t, locale }: ChartProps<RecurringPoint>) {
  const canvas = useChart({
    type: "bar",
    data: {
      labels: points.map((point) => fmt.month(point.period)),
      datasets: [
        {
          label: t("panel.dashboard.monthly_donors"),
          data: points.map((point) => point.monthly),
          backgroundColor: ACCENT,
          borderRadius: 3,
        },
        {
          label: t("panel.dashboard.yearly_donors"),
          data: points.map((point) => point.yearly),
          backgroundColor: TEAL,
          borderRadius: 3,
        },
      ],
    },
    options: {
      locale,
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: {
        x: { stacked: true, grid: { display: false } },
        y: { stacked: true, ...moneyAxis(fmt) },
      },
      plugins: {
        legend: { position: "bottom" },
        tooltip: { callbacks: { label: (item) => ` ${item.dataset.label}: ${fmt.money(Number(item.raw))}` } },
        filler: { propagate: false },
      },
    },
  } as ChartConfiguration);
  return <canvas ref={canvas} role="img" aria-label={t("panel.dashboard.recurring_chart_label")} />;
}
