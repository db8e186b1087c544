// Package llm holds the model providers: the Provider interface that streams
// seed-000 AssistantMessageEvents, and its implementations for the Anthropic
// Messages API (Anthropic), OpenAI-compatible chat completions, also served
// by Ollama, vLLM and llama.cpp (OpenAI), and Echo, a provider with no
// network for demos and tests. It also owns the `models:` configuration
// section the providers are built from.
//
// Router resolves "<provider>/<model>" references and streams a call with
// retries and fallbacks that never repeat what a caller has already seen.
// MessageBuilder is the one place that turns a vendor's stream into events,
// so every provider, including one an embedding program writes, emits the
// same event shapes. Package llmtest holds fakes of both vendor APIs and a
// scripted Provider for tests.
package llm
