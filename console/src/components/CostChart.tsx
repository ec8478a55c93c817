import { formatUsd } from '../api/usage';

const BAR = 10;
const HEIGHT = 100;

/**
 * Cost per day as SVG bars (hand-drawn: no chart library). It scales to its container's width,
 * so it never makes the page scroll sideways; each bar's tooltip gives its day and cost.
 */
export function CostChart({ days }: { days: { day: string; cost: number }[] }) {
  if (days.length === 0) return <p className="muted">No days in the range.</p>;
  const max = Math.max(...days.map((d) => d.cost));
  const peak = days.find((d) => d.cost === max)!;
  const summary =
    max > 0
      ? `Cost per day from ${days[0].day} to ${days.at(-1)!.day}; highest ${formatUsd(max)} on ${peak.day}`
      : `No cost from ${days[0].day} to ${days.at(-1)!.day}`;
  return (
    <figure className="cost-chart">
      <div className="cost-chart-scale muted" aria-hidden="true">
        {formatUsd(max)}
      </div>
      <svg
        viewBox={`0 0 ${days.length * BAR} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={summary}
      >
        <line x1={0} y1={HEIGHT} x2={days.length * BAR} y2={HEIGHT} className="axis" />
        {days.map((d, i) => {
          const height = max > 0 ? (d.cost / max) * HEIGHT : 0;
          return (
            <rect
              key={d.day}
              data-day={d.day}
              x={i * BAR + 1}
              y={HEIGHT - height}
              width={BAR - 2}
              height={height}
            >
              <title>{`${d.day}: ${formatUsd(d.cost)}`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="cost-chart-days muted">
        <span>{days[0].day}</span>
        <span>{days.at(-1)!.day}</span>
      </figcaption>
    </figure>
  );
}
