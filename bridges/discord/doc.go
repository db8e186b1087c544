// Package discord will be the Discord bridge (github.com/bwmarrin/discordgo).
// So far it holds the session keys of Discord conversations and the
// classification of gateway close codes.
package discord
