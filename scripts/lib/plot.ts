/**
 * The bench's plot: get latency and Temporal requests per second against the number of pollers, drawn as SVG and
 * written as PNG by headless Chromium (Debian's, as the tests use it).
 */
import { writeFileSync } from 'node:fs';
import { launchChromium } from '../../test/helpers/browser';

/** One line of a panel: its label, colour and a value per x. */
export interface Series {
  label: string;
  color: string;
  values: (number | undefined)[];
  dashed?: boolean;
}

/** One panel: a title, the y axis' name, and its lines over the shared x values. */
export interface Panel {
  title: string;
  yLabel: string;
  series: Series[];
  /** A log scale for y (values spanning several powers of ten); linear from 0 otherwise. */
  logY?: boolean;
}

const WIDTH = 520;
const HEIGHT = 360;
const MARGIN = { left: 64, right: 16, top: 36, bottom: 86 };

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten. */
function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** One panel as an SVG group, x on a log scale. */
function panelSvg(panel: Panel, xs: number[], offsetX: number): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const all = panel.series.flatMap((series) => series.values.filter((value): value is number => value !== undefined));
  const yMax = niceCeiling(Math.max(...all, 0) * 1.05);
  const [lo, hi] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs))];
  const x = (value: number) => MARGIN.left + (hi === lo ? plotW / 2 : ((Math.log10(value) - lo) / (hi - lo)) * plotW);
  // Log y: from the power of ten below the smallest value to the one above the largest.
  const positive = all.filter((value) => value > 0);
  const yLo = Math.floor(Math.log10(Math.min(...positive, 1)));
  const yHi = Math.max(Math.ceil(Math.log10(Math.max(...positive, 1))), yLo + 1);
  const y = panel.logY
    ? (value: number) => MARGIN.top + plotH - ((Math.log10(Math.max(value, 10 ** yLo)) - yLo) / (yHi - yLo)) * plotH
    : (value: number) => MARGIN.top + plotH - (value / yMax) * plotH;
  const ticks = panel.logY
    ? Array.from({ length: yHi - yLo + 1 }, (_, index) => 10 ** (yLo + index))
    : Array.from({ length: 6 }, (_, index) => (yMax / 5) * index);
  const parts: string[] = [`<g transform="translate(${offsetX},0)">`];
  parts.push(`<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">${escape(panel.title)}</text>`);
  for (const value of ticks) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(value)}" y2="${y(value)}" stroke="#e3e3e3"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(value) + 4}" text-anchor="end" font-size="11">${Number(value.toPrecision(3))}</text>`,
    );
  }
  for (const value of xs) {
    parts.push(
      `<line x1="${x(value)}" x2="${x(value)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#f0f0f0"/>`,
      `<text x="${x(value)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" font-size="11">${value}</text>`,
    );
  }
  parts.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH + 34}" text-anchor="middle" font-size="12">pollers (each 1 read/s)</text>`,
    `<text transform="translate(16,${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${escape(panel.yLabel)}</text>`,
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
  );
  panel.series.forEach((series, index) => {
    const points = xs.flatMap((value, i) => (series.values[i] === undefined ? [] : [[x(value), y(series.values[i]!)] as const]));
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : '';
    parts.push(
      `<polyline fill="none" stroke="${series.color}" stroke-width="2.5"${dash} points="${points.map(([px, py]) => `${px},${py}`).join(' ')}"/>`,
      ...points.map(([px, py]) => `<circle cx="${px}" cy="${py}" r="3.5" fill="${series.color}"/>`),
    );
    const legendY = HEIGHT - 30 + Math.floor(index / 2) * 16;
    const legendX = MARGIN.left + (index % 2) * (plotW / 2);
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 22}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${series.color}" stroke-width="2.5"${dash}/>`,
      `<text x="${legendX + 28}" y="${legendY}" font-size="11">${escape(series.label)}</text>`,
    );
  });
  parts.push('</g>');
  return parts.join('');
}

/** Draws the panels side by side over `xs` and writes the PNG to `file`. */
export async function writePlot(file: string, xs: number[], panels: Panel[], caption: string): Promise<void> {
  const width = WIDTH * panels.length;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT + 24}" font-family="sans-serif">` +
    `<rect width="100%" height="100%" fill="white"/>` +
    panels.map((panel, index) => panelSvg(panel, xs, index * WIDTH)).join('') +
    `<text x="${width / 2}" y="${HEIGHT + 14}" text-anchor="middle" font-size="11" fill="#555">${escape(caption)}</text></svg>`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width, height: HEIGHT + 24 } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    writeFileSync(file, await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width, height: HEIGHT + 24 } }));
  } finally {
    await browser.close();
  }
}
