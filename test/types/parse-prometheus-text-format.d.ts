// The package ships no types; its result (prom2json's shape) is narrowed by the test that reads it.
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
