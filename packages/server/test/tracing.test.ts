// The switch and the standard variables (the spans themselves: tracing.integration.test.ts).
import { describe, expect, it } from 'vitest';
import { startTracing, tracingRequested } from '../src/tracing.ts';

describe('tracingRequested', () => {
  it('is off when nothing asks for it', () => {
    expect(tracingRequested(undefined, {})).toBe(false);
  });

  it('follows the switch over the endpoint variables', () => {
    expect(tracingRequested(true, {})).toBe(true);
    expect(tracingRequested(false, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
  });

  it('is on when an OTLP endpoint or a trace exporter is named', () => {
    expect(tracingRequested(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested(undefined, { OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  });

  it('is off when the SDK is disabled or the exporter is none, whatever the switch says', () => {
    expect(tracingRequested(true, { OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingRequested(true, { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
  });
});

describe('startTracing', () => {
  it('registers no tracer provider when off', async () => {
    const tracing = await startTracing({ enabled: false });
    expect(tracing.enabled).toBe(false);
    const { trace, ProxyTracerProvider } = await import('@opentelemetry/api');
    const provider = trace.getTracerProvider();
    expect(provider).toBeInstanceOf(ProxyTracerProvider);
    expect((provider as InstanceType<typeof ProxyTracerProvider>).getDelegate().constructor.name).toBe('NoopTracerProvider');
  });
});
