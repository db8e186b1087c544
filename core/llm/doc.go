// Package llm holds the model providers: the Provider interface that streams
// seed-000 AssistantMessageEvents, and its implementations for the Anthropic
// Messages API, OpenAI-compatible chat completions (also Ollama, vLLM and
// llama.cpp servers) and echo, a provider with no network for demos and tests.
//
// The providers arrive with the agent core; this package already owns the
// `models:` configuration section they are built from.
package llm
