import { formatUsd } from '../format/money';
import { labelledIndexes, niceScale, shortDay } from '../format/scale';
import { DataTable } from './table';

const BAR = 10;
const HEIGHT = 100;

type Day = { day: string; cost: number };

/**
 * Cost per day as bars over a dollar axis with gridlines, days labelled underneath (hand-drawn:
 * no chart library). The bars are SVG stretched to the width, the labels HTML, so text never
 * stretches and the page never scrolls sideways; each bar's tooltip gives its day and cost, and
 * the same figures are a table below for reading and for screen readers.
 */
export function CostChart({ days }: { days: Day[] }) {
  if (days.length === 0) return <p className="muted">No days in the range.</p>;
  const max = Math.max(...days.map((d) => d.cost));
  const { top, ticks } = niceScale(max);
  const peak = days.find((d) => d.cost === max)!;
  const first = days[0].day;
  const last = days.at(-1)!.day;
  const summary =
    max > 0
      ? `Cost per day from ${first} to ${last}; highest ${formatUsd(max)} on ${peak.day}`
      : `No cost from ${first} to ${last}`;
  const at = (value: number) => (top > 0 ? (value / top) * 100 : 0);
  const costly = days.filter((d) => d.cost > 0);
  return (
    <figure className="cost-chart">
      <div className="chart-body">
        <div className="chart-y" aria-hidden="true">
          {ticks.map((tick) => (
            <span key={tick} style={{ bottom: `${at(tick)}%` }}>
              {formatUsd(tick)}
            </span>
          ))}
        </div>
        <div className="chart-plot">
          <svg
            viewBox={`0 0 ${days.length * BAR} ${HEIGHT}`}
            preserveAspectRatio="none"
            role="img"
            aria-label={summary}
          >
            {ticks.map((tick) => (
              <line
                key={tick}
                x1={0}
                x2={days.length * BAR}
                y1={HEIGHT - at(tick)}
                y2={HEIGHT - at(tick)}
                className={tick === 0 ? 'axis' : 'grid'}
              />
            ))}
            {days.map((d, i) => {
              const height = at(d.cost);
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
          <div className="chart-x" aria-hidden="true">
            {labelledIndexes(days.length).map((i) => {
              const left = ((i + 0.5) / days.length) * 100;
              // Centred under its bar, but kept inside the chart at either end.
              const shift = left < 10 ? '0' : left > 90 ? '-100%' : '-50%';
              return (
                <span
                  key={days[i].day}
                  style={{ left: `${left}%`, transform: `translateX(${shift})` }}
                >
                  {shortDay(days[i].day)}
                </span>
              );
            })}
          </div>
        </div>
      </div>
      <figcaption className="muted">
        {max > 0
          ? `Cost per UTC day, ${shortDay(first)} to ${shortDay(last)}; the highest, ${formatUsd(max)}, on ${shortDay(peak.day)}.`
          : `No cost from ${shortDay(first)} to ${shortDay(last)}.`}
      </figcaption>
      {costly.length > 0 && (
        <details className="chart-table">
          <summary>
            Cost per day as a table ({costly.length} {costly.length === 1 ? 'day' : 'days'} with
            runs)
          </summary>
          <DataTable
            label="Cost per day"
            rows={costly}
            rowKey={(d) => d.day}
            columns={[
              { key: 'day', header: 'Day (UTC)', cell: (d) => d.day },
              { key: 'cost', header: 'Cost', cell: (d) => formatUsd(d.cost) },
            ]}
            empty={null}
          />
        </details>
      )}
    </figure>
  );
}
