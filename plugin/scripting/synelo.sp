/**
 * synelo for Team Fortress 2: ratings, scrambles and autobalance from a synelo service.
 *
 * The decisions (participation, reports, triggers, the report buffer, the split cache, votes,
 * team locks, immunity, parties, command limits) live in
 * include/synelo/{logic,delivery,splits,community}.inc, which make no engine calls and are
 * tested under pysmx's VM; this file turns game events into their events and their actions
 * into HTTP requests (REST in Pawn 1.3) and team changes. synelo/community.sp has the player
 * commands and the team lock, synelo/api.sp the natives, forwards and admin menu,
 * synelo/scores.sp each mode's margin read from the game's entities.
 */

#pragma semicolon 1
#pragma newdecls required

#include <sourcemod>
#include <sdktools>
#include <tf2>
#include <tf2_stocks>
#include <synelo/ripext_natives>
#include <synelo/logic>
#include <synelo/delivery>
#include <synelo/splits>
#include <synelo/community>
#include <synelo/nativevotes_min>
#undef REQUIRE_PLUGIN
#include <adminmenu>

#define SYNELO_VERSION "0.1.0"
// The project's public home page. Still a placeholder: the project has no public address yet
// (set it here once it has one).
#define SYNELO_URL "https://github.com/"
#define SYN_BODY_LEN SL_REPORT_LEN
// Per-client arrays are SL_MAX_CLIENTS + 1 (101 + 1, SourceMod 1.12), whatever the compiler's includes say
// (pysmx ships SourceMod 1.11's, whose MAXPLAYERS is 65); TF2 servers take up to 100 players.
const float SYN_CAPTURE_IMMUNE_S = 30.0;  // a player who captured this recently is not moved

public Plugin myinfo =
{
    name = "synelo",
    author = "synelo",
    description = "Skill ratings, optimal scrambles and autobalance from a synelo service",
    version = SYNELO_VERSION,
    url = SYNELO_URL
};

ConVar g_cvUrl;
ConVar g_cvToken;
ConVar g_cvPool;
ConVar g_cvServerId;
ConVar g_cvEnabled;
ConVar g_cvStreak;
ConVar g_cvFullRounds;
ConVar g_cvDelay;
ConVar g_cvTimeout;
ConVar g_cvCutoff;
ConVar g_cvMode;
ConVar g_cvPolicy;
ConVar g_cvSeDelay;
ConVar g_cvSeGap;
ConVar g_cvFallback;
ConVar g_cvMoveWait;
ConVar g_cvShortCommands;
ConVar g_cvMapModes;
ConVar g_cvAutoMinPlayers;
ConVar g_cvAutoCooldown;
ConVar g_cvAutoTriggers;
ConVar g_cvAutoRoundMin;
ConVar g_cvAutoRoundMax;
bool g_mapOff;                // sm_synelo_map_modes says "off" for this map

// TF2's own balancing and its scramble vote (which would undo synelo's split), turned off while
// synelo is enabled and restored afterwards, and while the service is unreachable for longer
// than sm_synelo_fallback_seconds (then TF2 balances until the service answers again).
char g_tfCvars[][] = { "mp_autoteambalance", "mp_scrambleteams_auto", "tf_arena_max_streak",
    "sv_vote_issue_scramble_teams_allowed" };
char g_tfOff[][] = { "0", "0", "0", "0" };
char g_tfSaved[sizeof(g_tfCvars)][32];
bool g_tfOverridden;

bool g_ripOk;                 // every rip.ext native we use is available
char g_clientId[SL_MAX_CLIENTS + 1][SL_ID_LEN];
int g_clientRating[SL_MAX_CLIENTS + 1];
bool g_clientVisible[SL_MAX_CLIENTS + 1];
int g_clientRounds[SL_MAX_CLIENTS + 1];
bool g_clientKnown[SL_MAX_CLIENTS + 1];
bool g_clientGreet[SL_MAX_CLIENTS + 1];   // tell the player the rating once in game
bool g_clientJoined[SL_MAX_CLIENTS + 1];  // has had a team since it connected (player_team)
char g_clientGoneId[SL_MAX_CLIENTS + 1][SL_ID_LEN];  // who OnClientDisconnect saw leave

bool g_preRound;              // between round start and the doors going up
bool g_waitSetup;             // the doors go up when the setup time ends
bool g_duel;                  // arena round 1: tf_arena_override_team_size is 1
char g_savedTeamSize[16];
bool g_splitsInFlight;
bool g_scrambleAfterSplits;   // apply the pending scramble when the splits arrive
char g_lastScrambleWhy[32];
bool g_scrambleByVote;        // the pending forced scramble is the players' vote, not an admin's
float g_mapStartedAt;
int g_lastStatus = -1;        // last HTTP status from the service (0: unreachable)
float g_lastStatusAt;
float g_unreachableSince = -1.0;  // engine time of the first failure in a row, -1: reachable
bool g_fallback;              // TF2's own balancing is on because the service is unreachable
bool g_refusalLogged;         // the service refused the token or pool, and the log said so
float g_capturedAt[SL_MAX_CLIENTS + 1];  // engine time of each player's last capture
int g_moveSide[SL_MAX_CLIENTS + 1];      // an F11 move waiting for the player's death
float g_moveBy[SL_MAX_CLIENTS + 1];      // ... until this engine time
char g_body[SYN_BODY_LEN];      // request bodies are built here (kept off the stack)

#include "synelo/community.sp"
#include "synelo/api.sp"
#include "synelo/votes.sp"
#include "synelo/scores.sp"

// --- loading ------------------------------------------------------------------------------

public APLRes AskPluginLoad2(Handle myself, bool late, char[] error, int err_max)
{
    SynRip_MarkOptional();
    SynNV_MarkOptional();
    Api_CreateNatives();
    RegPluginLibrary("synelo");
    return APLRes_Success;
}

public void OnPluginStart()
{
    LoadTranslations("common.phrases");
    LoadTranslations("synelo.phrases");

    CreateConVar("sm_synelo_version", SYNELO_VERSION, "synelo plugin version",
        FCVAR_NOTIFY | FCVAR_DONTRECORD | FCVAR_SPONLY);
    g_cvUrl = CreateConVar("sm_synelo_url", "http://127.0.0.1:8000",
        "Base URL of the synelo service (no trailing slash)");
    g_cvToken = CreateConVar("sm_synelo_token", "",
        "Server token of the synelo service (sent as Authorization: Bearer)", FCVAR_PROTECTED);
    g_cvPool = CreateConVar("sm_synelo_pool", "default", "Rating pool of this server");
    g_cvServerId = CreateConVar("sm_synelo_server_id", "",
        "Identifier of this server in round reports (empty: tf2-<hostport>)");
    g_cvEnabled = CreateConVar("sm_synelo_enabled", "1",
        "1: synelo rates, scrambles and autobalances; TF2's own balancing is off", _, true, 0.0, true, 1.0);
    g_cvStreak = CreateConVar("sm_synelo_streak", "3",
        "Arena: wins in a row by one team that trigger a scramble", _, true, 1.0);
    g_cvFullRounds = CreateConVar("sm_synelo_full_rounds", "2",
        "Attack/defend and payload: full rounds between scrambles", _, true, 1.0);
    g_cvDelay = CreateConVar("sm_synelo_autobalance_delay", "10",
        "Seconds between seeing a mid-round imbalance and fixing it", _, true, 0.0, true, 120.0);
    g_cvTimeout = CreateConVar("sm_synelo_timeout", "10",
        "Seconds a request to the service may take", _, true, 1.0, true, 120.0);
    g_cvCutoff = CreateConVar("sm_synelo_autobalance_cutoff", "30",
        "No autobalance moves when fewer seconds than this are left in the round", _, true, 0.0);
    g_cvMode = CreateConVar("sm_synelo_mode", "",
        "Game mode (arena, koth, cp, ad, ctf, pl, plr, mvm, pd, rd, pass, sd); empty: detect from the map");
    g_cvMapModes = CreateConVar("sm_synelo_map_modes", "",
        "Per map: comma-separated MAP=MODE, where MAP may end in * (a prefix) and MODE may be off (synelo sits the map out), e.g. vsh_*=off,koth_lakeside_event=koth");
    g_cvAutoMinPlayers = CreateConVar("sm_synelo_autoscramble_min_players", "8",
        "Automatic scrambles: fewer eligible players than this and none fires", _, true, 0.0);
    g_cvAutoCooldown = CreateConVar("sm_synelo_autoscramble_cooldown", "300",
        "Automatic scrambles: seconds after any scramble before one fires", _, true, 0.0);
    g_cvAutoTriggers = CreateConVar("sm_synelo_autoscramble_triggers",
        "waiting_ended,arena_round_2,streak,attackers_timed_out,full_rounds,no_capture",
        "Automatic scrambles: the triggers that may fire (comma-separated; empty: none)");
    g_cvAutoRoundMin = CreateConVar("sm_synelo_autoscramble_round_min", "0",
        "Automatic scrambles judged on a round: the round lasted at least this many seconds", _, true, 0.0);
    g_cvAutoRoundMax = CreateConVar("sm_synelo_autoscramble_round_max", "0",
        "Automatic scrambles judged on a round: the round lasted at most this many seconds (0: no limit)", _, true, 0.0);
    g_cvPolicy = CreateConVar("sm_synelo_autobalance", "f11",
        "Mid-round policy: f11 (odd joiner and F11 moves from the service) or sectors_edge");
    g_cvSeDelay = CreateConVar("sm_synelo_se_delay", "20",
        "sectors_edge: seconds after marking the stronger team before dying players move", _, true, 0.0);
    g_cvSeGap = CreateConVar("sm_synelo_se_power_gap", "10",
        "sectors_edge: team power difference that is unbalanced", _, true, 0.5);
    g_cvFallback = CreateConVar("sm_synelo_fallback_seconds", "120",
        "Seconds the service may be unreachable before TF2's own autobalance and scrambles come back on (0: never)",
        _, true, 0.0);
    g_cvMoveWait = CreateConVar("sm_synelo_move_wait", "10",
        "F11 moves: seconds a live player may stay until they die and are moved dead (0: move at once)",
        _, true, 0.0, true, 60.0);
    g_cvNativeVotes = CreateConVar("sm_synelo_nativevotes", "1",
        "1: the vote scramble uses TF2's vote screen when the NativeVotes plugin runs", _, true, 0.0, true, 1.0);
    g_cvShortCommands = CreateConVar("sm_synelo_short_commands", "1",
        "1: also register !rank and !top (sm_rank, sm_top) when no other plugin has them", _, true, 0.0, true, 1.0);
    g_cvVoteRatio = CreateConVar("sm_synelo_vote_ratio", "60",
        "Vote scramble: percent of the players on a team whose votes scramble", _, true, 1.0, true, 100.0);
    g_cvVoteMinPlayers = CreateConVar("sm_synelo_vote_min_players", "6",
        "Vote scramble: fewer players on the teams than this and no vote counts", _, true, 1.0);
    g_cvVoteCooldown = CreateConVar("sm_synelo_vote_cooldown", "300",
        "Vote scramble: seconds after any scramble before a vote counts", _, true, 0.0);
    g_cvVoteDelay = CreateConVar("sm_synelo_vote_delay", "60",
        "Vote scramble: seconds after the map started before a vote counts", _, true, 0.0);
    g_cvVoteRoundEnd = CreateConVar("sm_synelo_vote_at_round_end", "0",
        "Vote scramble: 1 scrambles at the round end, 0 at once", _, true, 0.0, true, 1.0);
    g_cvTeamLock = CreateConVar("sm_synelo_teamlock_seconds", "60",
        "Seconds a scramble or an autobalance move keeps a player on their team (0: off)", _, true, 0.0);
    g_cvTeamLockSpectate = CreateConVar("sm_synelo_teamlock_spectate", "1",
        "1: a locked player may go to spectator (and come back to the same team only)", _, true, 0.0, true, 1.0);
    g_cvMoveCooldown = CreateConVar("sm_synelo_move_cooldown", "120",
        "Seconds before the same player may be moved again", _, true, 0.0);
    g_cvImmunityFlag = CreateConVar("sm_synelo_immunity_flag", "b",
        "Admin flag(s) exempt from being moved (empty: nobody). b: the few admins online; not a (reservation), which donors often have: with many players immune the teams cannot be balanced");
    g_cvParties = CreateConVar("sm_synelo_parties", "1",
        "1: players may form parties (!party) that scrambles keep together", _, true, 0.0, true, 1.0);
    g_cvPartySize = CreateConVar("sm_synelo_party_size", "4",
        "Players a party may have", _, true, 2.0, true, 12.0);
    g_cvCommandInterval = CreateConVar("sm_synelo_command_interval", "5",
        "Seconds between two uses of a player command (!rank, !top, ...) by one player", _, true, 0.0);
    AutoExecConfig(true, "plugin.synelo");

    g_cvEnabled.AddChangeHook(OnEnabledChanged);
    g_cvStreak.AddChangeHook(OnSettingChanged);
    g_cvFullRounds.AddChangeHook(OnSettingChanged);
    g_cvDelay.AddChangeHook(OnSettingChanged);
    g_cvPolicy.AddChangeHook(OnSettingChanged);
    g_cvAutoMinPlayers.AddChangeHook(OnSettingChanged);
    g_cvAutoCooldown.AddChangeHook(OnSettingChanged);
    g_cvAutoTriggers.AddChangeHook(OnSettingChanged);
    g_cvAutoRoundMin.AddChangeHook(OnSettingChanged);
    g_cvAutoRoundMax.AddChangeHook(OnSettingChanged);
    g_cvSeDelay.AddChangeHook(OnSettingChanged);
    g_cvSeGap.AddChangeHook(OnSettingChanged);
    ConVar community[11];
    community[0] = g_cvVoteRatio;
    community[1] = g_cvVoteMinPlayers;
    community[2] = g_cvVoteCooldown;
    community[3] = g_cvVoteDelay;
    community[4] = g_cvVoteRoundEnd;
    community[5] = g_cvTeamLock;
    community[6] = g_cvTeamLockSpectate;
    community[7] = g_cvMoveCooldown;
    community[8] = g_cvParties;
    community[9] = g_cvPartySize;
    community[10] = g_cvCommandInterval;
    for (int c = 0; c < sizeof(community); c++)
    {
        community[c].AddChangeHook(OnSettingChanged);
    }

    HookEvent("player_hurt", Event_PlayerHurt);
    HookEvent("player_healed", Event_PlayerHealed);
    HookEvent("player_team", Event_PlayerTeam);
    HookEvent("player_death", Event_PlayerDeath);
    HookEvent("teamplay_round_start", Event_RoundStart);
    HookEvent("teamplay_round_active", Event_RoundActive);
    HookEvent("arena_round_start", Event_ArenaRoundStart);
    HookEvent("teamplay_setup_finished", Event_SetupFinished);
    HookEvent("teamplay_round_win", Event_RoundWin);
    HookEvent("teamplay_point_captured", Event_PointCaptured);
    HookEvent("teamplay_flag_event", Event_FlagEvent);

    RegAdminCmd("sm_synelo_status", Cmd_Status, ADMFLAG_GENERIC,
        "sm_synelo_status - service reachable, report buffer, split cache age");
    RegAdminCmd("sm_synelo_scramble", Cmd_Scramble, ADMFLAG_GENERIC,
        "sm_synelo_scramble - scramble at the next round start");
    RegAdminCmd("sm_synelo_move", Cmd_Move, ADMFLAG_GENERIC,
        "sm_synelo_move <target> <red|blue> - move a player as autobalance would (immunity, cooldown)");
    RegAdminCmd("sm_synelo_rating", Cmd_Rating, ADMFLAG_GENERIC,
        "sm_synelo_rating <target> - a player's synelo rating");
    RegConsoleCmd("sm_synelo_rank", Cmd_Rank, "sm_synelo_rank [name] - your synelo rating and place, or a player's");
    RegConsoleCmd("sm_synelo_top", Cmd_Top, "sm_synelo_top - the 10 best of this server's pool");
    RegConsoleCmd("sm_synelo_balance", Cmd_Balance, "sm_synelo_balance - each team's chance to win now");
    RegConsoleCmd("sm_synelo_party", Cmd_Party, "sm_synelo_party <name> | accept | leave - play on one team");
    RegConsoleCmd("sm_synelo_votescramble", Cmd_VoteScramble,
        "sm_synelo_votescramble - vote to scramble the teams");
    g_cvImmunityFlag.AddChangeHook(OnImmunityFlagChanged);
    HookEvent("player_changename", Event_NameChange);
    HookEvent("player_disconnect", Event_PlayerDisconnect);
    AddCommandListener(Listener_JoinTeam, "jointeam");
    AddCommandListener(Listener_JoinTeam, "spectate");
    Api_CreateForwards();

    SD_Reset();
    SC_Clear();
    CheckExtension();

    // Loaded late: pick up the players already here (OnMapStart seats them in the logic).
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientConnected(client) && IsClientAuthorized(client) && !IsFakeClient(client)
            && !GetClientAuthId(client, AuthId_SteamID64, g_clientId[client], SL_ID_LEN))
        {
            g_clientId[client][0] = '\0';
        }
    }
}

void CheckExtension()
{
    char missing[1024];
    int count = SynRip_Missing(missing, sizeof(missing));
    g_ripOk = count == 0;
    if (!g_ripOk)
    {
        LogError("REST in Pawn 1.3 (rip.ext) is not loaded or too old: %d native(s) missing: %s. "
            ... "synelo cannot reach its service and sits out: no lookups, no reports, no scrambles, no moves; "
            ... "TF2's own autobalance and scramble vote stay on. "
            ... "Install addons/sourcemod/extensions/rip.ext.so and reload the plugin.",
            count, missing);
    }
}

// The short chat commands, once the cfg has said whether to (after every plugin has loaded, so
// that a rank or scramble plugin that owns !rank or !top keeps it).
void RegisterShortCommands()
{
    static bool done;
    if (done || !g_cvShortCommands.BoolValue)
    {
        return;
    }
    done = true;
    if (!CommandExists("sm_rank"))
    {
        RegConsoleCmd("sm_rank", Cmd_Rank, "sm_rank [name] - your synelo rating (sm_synelo_rank)");
    }
    else
    {
        LogMessage("synelo: sm_rank belongs to another plugin; synelo's is sm_synelo_rank");
    }
    if (!CommandExists("sm_top"))
    {
        RegConsoleCmd("sm_top", Cmd_Top, "sm_top - the pool's 10 best (sm_synelo_top)");
    }
    else
    {
        LogMessage("synelo: sm_top belongs to another plugin; synelo's is sm_synelo_top");
    }
}

public void OnConfigsExecuted()
{
    RegisterShortCommands();
    SetUpMap();  // configures the logic too
    ApplyEnabled();
    if (Active() && SL_IsArena() && SL_RoundNumber() == 0)
    {
        StartDuel();  // round 1 is a 1v1 duel
    }
    for (int client = 1; client <= MaxClients; client++)
    {
        if (g_clientId[client][0] != '\0' && !g_clientKnown[client] && IsClientConnected(client))
        {
            LookUp(client);
        }
    }
}

public void OnSettingChanged(ConVar convar, const char[] oldValue, const char[] newValue)
{
    ConfigureLogic();
}

void ConfigureLogic()
{
    SL_Configure(g_cvStreak.IntValue, g_cvFullRounds.IntValue,
        RoundToNearest(g_cvDelay.FloatValue * 1000.0), 1000);
    char policy[32];
    g_cvPolicy.GetString(policy, sizeof(policy));
    if (!StrEqual(policy, "f11") && !StrEqual(policy, "sectors_edge"))
    {
        LogError("sm_synelo_autobalance \"%s\" is neither f11 nor sectors_edge; using f11", policy);
    }
    SL_ConfigureScrambles(g_cvAutoMinPlayers.IntValue, RoundToNearest(g_cvAutoCooldown.FloatValue * 1000.0),
        TriggerBits(), RoundToNearest(g_cvAutoRoundMin.FloatValue * 1000.0),
        RoundToNearest(g_cvAutoRoundMax.FloatValue * 1000.0));
    SL_ConfigureSectorsEdge(StrEqual(policy, "sectors_edge"),
        RoundToNearest(g_cvSeDelay.FloatValue * 1000.0), RoundToNearest(g_cvSeGap.FloatValue * 2.0));
    Community_Configure();
}

// sm_synelo_autoscramble_triggers as SL_ConfigureScrambles' bits.
int TriggerBits()
{
    static const char names[][] = { "none", "waiting_ended", "arena_round_2", "streak",
        "attackers_timed_out", "full_rounds", "no_capture" };
    char text[256];
    char parts[8][32];
    g_cvAutoTriggers.GetString(text, sizeof(text));
    int count = ExplodeString(text, ",", parts, sizeof(parts), sizeof(parts[]));
    int bits = 0;
    for (int p = 0; p < count; p++)
    {
        TrimString(parts[p]);
        bool known = parts[p][0] == '\0';
        for (int w = 1; w < sizeof(names); w++)
        {
            if (StrEqual(parts[p], names[w]))
            {
                bits |= SL_TriggerBit(view_as<SLWhy>(w));
                known = true;
            }
        }
        if (!known)
        {
            LogError("sm_synelo_autoscramble_triggers: \"%s\" is not a trigger", parts[p]);
        }
    }
    return bits;
}

public void OnPluginEnd()
{
    LogWaitingReports();
    RestoreTf2Balance();
    RestoreTeamSize();
}

public void OnMapStart()
{
    g_mapStartedAt = GetEngineTime();
    CreateTimer(1.0, Timer_Tick, _, TIMER_REPEAT | TIMER_FLAG_NO_MAPCHANGE);
    CreateTimer(float(SYN_RECONNECT_S), Timer_ForgetGone, _, TIMER_FLAG_NO_MAPCHANGE);
}

// The map's mode, server id and round state, from the ConVars. Run from OnConfigsExecuted, not
// OnMapStart: SourceMod executes server.cfg and plugin.synelo.cfg (AutoExecConfig) after
// OnMapStart and before OnConfigsExecuted ("OnAutoConfigsBuffered ... is called once, right
// after OnMapStart() but any time before OnConfigsExecuted()", sm.alliedmods.net/new-api/
// sourcemod/OnAutoConfigsBuffered), so in OnMapStart sm_synelo_mode, sm_synelo_map_modes and
// sm_synelo_server_id still hold the previous map's values, or the defaults on the first map.
void SetUpMap()
{
    char path[PLATFORM_MAX_PATH];
    char map[64];
    GetCurrentMap(path, sizeof(path));
    if (!GetMapDisplayName(path, map, sizeof(map)))  // workshop/koth_x.ugc123: koth_x
    {
        strcopy(map, sizeof(map), path);
    }
    char serverId[64];
    ServerId(serverId, sizeof(serverId));
    char prefix[96];
    FormatEx(prefix, sizeof(prefix), "%s-%x", serverId, GetTime());
    g_refusalLogged = false;
    SL_Reset(DetectMode(map));
    SC_Clear();  // times restart with the map; waiting_ended (or arena round 1) asks anew
    ConfigureLogic();
    SL_SetServer(serverId, map, prefix);
    SG_MapStart(0);
    g_preRound = false;
    g_waitSetup = false;
    g_duel = false;
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && g_clientId[client][0] != '\0')
        {
            SL_Join(NowMs(), g_clientId[client], ClientSide(client, GetClientTeam(client)));
            SG_Join(NowMs(), g_clientId[client], ClientSide(client, GetClientTeam(client)),
                HasImmunity(client));
            if (g_clientKnown[client])
            {
                SL_SetRating(g_clientId[client], g_clientRating[client]);
            }
        }
    }
}

public void OnMapEnd()
{
    RestoreTeamSize();
}

void ServerId(char[] buffer, int maxlength)
{
    g_cvServerId.GetString(buffer, maxlength);
    if (buffer[0] == '\0')
    {
        FormatEx(buffer, maxlength, "tf2-%d", FindConVar("hostport").IntValue);
    }
}

// The mode sm_synelo_map_modes gives this map ("" when none; "off" sits it out).
void MapModeOf(const char[] map, char[] mode, int maxlength)
{
    mode[0] = '\0';
    char text[1024];
    char entries[32][96];
    g_cvMapModes.GetString(text, sizeof(text));
    int count = ExplodeString(text, ",", entries, sizeof(entries), sizeof(entries[]));
    int commas = 0;
    for (int i = 0; text[i] != '\0'; i++)
    {
        commas += text[i] == ',' ? 1 : 0;
    }
    if (commas >= sizeof(entries))
    {
        LogError("sm_synelo_map_modes has more than %d entries: the rest are ignored", sizeof(entries));
    }
    for (int e = 0; e < count; e++)
    {
        char pair[2][64];
        TrimString(entries[e]);
        if (ExplodeString(entries[e], "=", pair, sizeof(pair), sizeof(pair[])) != 2)
        {
            continue;
        }
        TrimString(pair[0]);
        TrimString(pair[1]);
        int len = strlen(pair[0]);
        bool prefix = len > 0 && pair[0][len - 1] == '*';
        if (prefix)
        {
            pair[0][len - 1] = '\0';
        }
        if (prefix ? StrContains(map, pair[0]) == 0 : StrEqual(map, pair[0]))
        {
            strcopy(mode, maxlength, pair[1]);
            return;
        }
    }
}

bool HasEntity(const char[] classname)
{
    return FindEntityByClassname(-1, classname) != -1;
}

// The mode: sm_synelo_map_modes for this map, else sm_synelo_mode, else the map's entities and
// prefix. The modes that have an objective entity of another mode (MvM's bomb and PD's and
// SD's pickups are item_teamflag, like CTF's intelligence) are recognised first.
SLMode DetectMode(const char[] map)
{
    char mode[32];
    SLMode chosen;
    MapModeOf(map, mode, sizeof(mode));
    g_mapOff = StrEqual(mode, "off");
    if (mode[0] == '\0' || g_mapOff)
    {
        g_cvMode.GetString(mode, sizeof(mode));
    }
    if (mode[0] != '\0')
    {
        if (SL_ModeFromName(mode, chosen))
        {
            return chosen;
        }
        LogError("sm_synelo_mode \"%s\" is not a mode; detecting it from the map", mode);
    }
    if (HasEntity("tf_logic_mann_vs_machine") || StrContains(map, "mvm_") == 0) return SL_MODE_MVM;
    if (HasEntity("tf_logic_player_destruction") || StrContains(map, "pd_") == 0) return SL_MODE_PD;
    if (HasEntity("tf_logic_robot_destruction") || StrContains(map, "rd_") == 0) return SL_MODE_RD;
    if (HasEntity("passtime_logic") || StrContains(map, "pass_") == 0) return SL_MODE_PASS;
    if (StrContains(map, "sd_") == 0) return SL_MODE_SD;  // TF2 has no SD logic entity: the prefix is its test
    if (HasEntity("tf_logic_arena") || StrContains(map, "arena_") == 0) return SL_MODE_ARENA;
    if (HasEntity("tf_logic_koth") || StrContains(map, "koth_") == 0) return SL_MODE_KOTH;
    if (HasEntity("tf_logic_multiple_escort") || StrContains(map, "plr_") == 0) return SL_MODE_PAYLOAD_RACE;
    if (HasEntity("team_train_watcher") || StrContains(map, "pl_") == 0) return SL_MODE_PAYLOAD;
    if (HasEntity("item_teamflag") || StrContains(map, "ctf_") == 0) return SL_MODE_CTF;
    // Control points: attack/defend when RED owns every point at the start.
    int points = 0;
    int red = 0;
    int ent = -1;
    while ((ent = FindEntityByClassname(ent, "team_control_point")) != -1)
    {
        points++;
        if (GetEntProp(ent, Prop_Data, "m_iDefaultOwner") == view_as<int>(TFTeam_Red))
        {
            red++;
        }
    }
    return (points > 0 && red == points) ? SL_MODE_ATTACK_DEFEND : SL_MODE_CP;
}

// --- enabling -----------------------------------------------------------------------------

public void OnEnabledChanged(ConVar convar, const char[] oldValue, const char[] newValue)
{
    ApplyEnabled();
}

void ApplyEnabled()
{
    if (Active() && !g_fallback)
    {
        OverrideTf2Balance();
    }
    else
    {
        RestoreTf2Balance();
        RestoreTeamSize();
    }
}

// Turns TF2's balancing off. Called again after every map's configs: server.cfg runs on each
// map load and may set a value back on (mp_autoteambalance 1 is common there); that value is
// then the one to restore, and it is turned off again.
void OverrideTf2Balance()
{
    for (int i = 0; i < sizeof(g_tfCvars); i++)
    {
        ConVar cv = FindConVar(g_tfCvars[i]);
        if (cv == null)
        {
            continue;
        }
        char now[32];
        cv.GetString(now, sizeof(now));
        if (!g_tfOverridden || !StrEqual(now, g_tfOff[i]))
        {
            strcopy(g_tfSaved[i], sizeof(g_tfSaved[]), now);
            cv.SetString(g_tfOff[i]);
        }
    }
    g_tfOverridden = true;
}

void RestoreTf2Balance()
{
    if (!g_tfOverridden)
    {
        return;
    }
    for (int i = 0; i < sizeof(g_tfCvars); i++)
    {
        ConVar cv = FindConVar(g_tfCvars[i]);
        if (cv != null && g_tfSaved[i][0] != '\0')
        {
            cv.SetString(g_tfSaved[i]);
        }
    }
    g_tfOverridden = false;
}

void RestoreTeamSize()
{
    if (!g_duel)
    {
        return;
    }
    ConVar cv = FindConVar("tf_arena_override_team_size");
    if (cv != null)
    {
        cv.SetString(g_savedTeamSize);
    }
    g_duel = false;
}

// synelo rates, scrambles and moves: enabled, not sat out on this map, not MvM.
bool Active()
{
    // Without rip.ext synelo cannot reach its service: it sits out, and leaves TF2's own
    // autobalance and scramble vote as the server's cfg set them (ApplyEnabled).
    return g_ripOk && g_cvEnabled.BoolValue && !g_mapOff && !SL_IsInert();
}

// --- players ------------------------------------------------------------------------------

// Milliseconds since the map started (the logic is reset with every map, and an int of
// milliseconds since the server started would overflow after 24 days).
int NowMs()
{
    return RoundToFloor((GetEngineTime() - g_mapStartedAt) * 1000.0);
}

// The logic's side for a TF2 team; arena players queued to play are SL_WAITING.
int ClientSide(int client, int team)
{
    if (team == view_as<int>(TFTeam_Red))
    {
        return SL_A;
    }
    if (team == view_as<int>(TFTeam_Blue))
    {
        return SL_B;
    }
    if (SL_IsArena() && team == view_as<int>(TFTeam_Spectator)
        && HasEntProp(client, Prop_Send, "m_bArenaSpectator")
        && !GetEntProp(client, Prop_Send, "m_bArenaSpectator"))
    {
        return SL_WAITING;
    }
    return SL_NONE;
}

public void OnClientAuthorized(int client, const char[] auth)
{
    g_clientId[client][0] = '\0';
    g_clientKnown[client] = false;
    if (IsFakeClient(client)
        || !GetClientAuthId(client, AuthId_SteamID64, g_clientId[client], SL_ID_LEN))
    {
        g_clientId[client][0] = '\0';
        return;
    }
    // Authorised after joining a team (player_team was ignored until now): seat it there.
    int side = IsClientInGame(client) ? ClientSide(client, GetClientTeam(client)) : SL_NONE;
    g_clientJoined[client] = IsClientInGame(client) && GetClientTeam(client) != view_as<int>(TFTeam_Unassigned);
    SL_Join(NowMs(), g_clientId[client], side);
    SG_Join(NowMs(), g_clientId[client], side, false);  // immunity: OnClientPostAdminCheck
    DrainActions();
    LookUp(client);
}

public void OnClientDisconnect(int client)
{
    g_moveSide[client] = SL_NONE;
    if (g_clientId[client][0] != '\0')
    {
        SL_Leave(NowMs(), g_clientId[client]);
        DrainActions();
        strcopy(g_clientGoneId[client], SL_ID_LEN, g_clientId[client]);  // for player_disconnect
    }
    g_clientId[client][0] = '\0';
    g_clientKnown[client] = false;
    g_clientGreet[client] = false;
}

// The player left the server (the engine fires player_disconnect for a real disconnect only):
// their vote, invites and party place go. SourceMod also calls OnClientDisconnect for every
// client when the map ends, before OnMapEnd, and a map change keeps parties (PlayerManager's
// OnSourceModLevelEnd runs before the OnMapEnd forward): Timer_ForgetGone sorts those out.
public void Event_PlayerDisconnect(Event event, const char[] name, bool dontBroadcast)
{
    int client = GetClientOfUserId(event.GetInt("userid"));
    if (client <= 0)
    {
        return;
    }
    bool gone = g_clientId[client][0] == '\0';
    if (gone)
    {
        strcopy(g_clientId[client], SL_ID_LEN, g_clientGoneId[client]);  // named in the messages
    }
    g_clientGoneId[client][0] = '\0';
    if (g_clientId[client][0] != '\0')
    {
        SG_Leave(NowMs(), g_clientId[client]);
        DrainCommunity();
    }
    if (gone)
    {
        g_clientId[client][0] = '\0';
    }
}

int ClientById(const char[] id)
{
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && StrEqual(g_clientId[client], id))
        {
            return client;
        }
    }
    return 0;
}

// --- game events --------------------------------------------------------------------------

public void Event_PlayerHurt(Event event, const char[] name, bool dontBroadcast)
{
    int victim = GetClientOfUserId(event.GetInt("userid"));
    int attacker = GetClientOfUserId(event.GetInt("attacker"));
    if (victim > 0)
    {
        SL_Damage(NowMs(), attacker > 0 ? g_clientId[attacker] : "", g_clientId[victim]);
        DrainActions();  // (a due autobalance fires before any event)
    }
}

public void Event_PlayerHealed(Event event, const char[] name, bool dontBroadcast)
{
    int patient = GetClientOfUserId(event.GetInt("patient"));
    int healer = GetClientOfUserId(event.GetInt("healer"));
    if (patient > 0 && healer > 0)
    {
        SL_Heal(NowMs(), g_clientId[healer]);
        DrainActions();
    }
}

public void Event_PlayerTeam(Event event, const char[] name, bool dontBroadcast)
{
    int client = GetClientOfUserId(event.GetInt("userid"));
    if (client <= 0 || event.GetBool("disconnect") || g_clientId[client][0] == '\0')
    {
        return;
    }
    int side = ClientSide(client, event.GetInt("team"));
    if (!g_clientJoined[client])
    {
        // The first team since connecting is the join (the logic saw the client arrive
        // unassigned at OnClientAuthorized): the odd-joiner rule looks at joiners.
        g_clientJoined[client] = true;
        SL_Join(NowMs(), g_clientId[client], side);
    }
    else
    {
        SL_TeamChange(NowMs(), g_clientId[client], side);
    }
    SG_TeamChange(NowMs(), g_clientId[client], ClientSide(client, event.GetInt("team")));
    DrainActions();
}

// Sector's Edge moves players as they die; its points are the scoreboard's, its power ranking
// key the synelo rating (TF2 has no scoreboard history to rank players by).
public void Event_PlayerDeath(Event event, const char[] name, bool dontBroadcast)
{
    int victim = GetClientOfUserId(event.GetInt("userid"));
    if (victim <= 0 || g_clientId[victim][0] == '\0' || !Active()
        || (event.GetInt("death_flags") & TF_DEATHFLAG_DEADRINGER))
    {
        return;
    }
    int t = NowMs();
    int resource = GetPlayerResourceEntity();
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && g_clientId[client][0] != '\0' && resource != -1)
        {
            SL_Points(t, g_clientId[client],
                GetEntProp(resource, Prop_Send, "m_iTotalScore", _, client));
        }
    }
    SL_Death(t, g_clientId[victim]);
    DrainActions();
    if (g_moveSide[victim] != SL_NONE)
    {
        ApplyF11Move(victim, g_moveSide[victim]);  // the move that waited for this death
        DrainActions();
    }
}

public void TF2_OnWaitingForPlayersEnd()
{
    if (!Active())
    {
        return;
    }
    SL_WaitingEnded(NowMs());
    DrainActions();
}

// Pre-round: teams may still change without disrupting play; a pending scramble happens here.
public void Event_RoundStart(Event event, const char[] name, bool dontBroadcast)
{
    g_preRound = true;
    g_waitSetup = false;
    if (Active() && SL_ScramblePending())
    {
        TryScramble();
    }
}

public void Event_RoundActive(Event event, const char[] name, bool dontBroadcast)
{
    if (SL_IsArena())
    {
        return;  // arena_round_start is the doors going up
    }
    // A round timer in its setup time has set the game rules' m_bInSetup
    // (CTeamRoundTimer::SetState, source-sdk-2013 teamplay_round_timer.cpp); the first
    // team_round_timer may be another stage's or a KOTH team's, so it is not asked.
    if (GameRules_GetProp("m_bInSetup"))
    {
        g_waitSetup = true;
        return;
    }
    DoorsUp();
}

public void Event_ArenaRoundStart(Event event, const char[] name, bool dontBroadcast)
{
    DoorsUp();
}

public void Event_SetupFinished(Event event, const char[] name, bool dontBroadcast)
{
    if (g_waitSetup)
    {
        g_waitSetup = false;
        DoorsUp();
    }
}

void DoorsUp()
{
    g_preRound = false;
    if (!Active())
    {
        return;
    }
    SL_RoundStart(NowMs(), SL_B);  // BLU attacks on attack/defend and payload maps
    SG_RoundStart(NowMs());
    DrainActions();
}

// Every round ends with teamplay_round_win, a draw included (team 0). TF2's
// CTeamplayRoundBasedRules::SetStalemate (source-sdk-2013, teamplayroundbased_gamerules.cpp):
// with mp_stalemate_enable 0 a round whose timer runs out is
// SetWinningTeam(TEAM_UNASSIGNED, WINREASON_STALEMATE), a teamplay_round_win with team 0; with
// mp_stalemate_enable 1 it fires teamplay_round_stalemate as sudden death BEGINS, and
// State_Think_STALEMATE later ends the round with teamplay_round_win: the surviving team
// (was_sudden_death 1), or team 0 when both die or the sudden death timer runs out. So
// teamplay_round_stalemate is never a round end, and synelo does not hook it.
public void Event_RoundWin(Event event, const char[] name, bool dontBroadcast)
{
    int team = event.GetInt("team");
    int winner = team == view_as<int>(TFTeam_Red) ? SL_A : (team == view_as<int>(TFTeam_Blue) ? SL_B : SL_DRAW);
    int red;
    int blu;
    if (Active() && RoundScores(red, blu))
    {
        SL_SetScores(red, blu);  // RED is side A, BLU side B
    }
    RoundEnded(winner, event.GetInt("full_round") != 0);
}

void RoundEnded(int winner, bool fullRound)
{
    g_preRound = false;
    if (!Active())
    {
        return;
    }
    SL_RoundEnd(NowMs(), winner, fullRound);
    DrainActions();
    SG_RoundEnd(NowMs());
    DrainCommunity();  // a vote that passed during the round scrambles at the next start
    if (g_duel)
    {
        RestoreTeamSize();
    }
}

public void Event_PointCaptured(Event event, const char[] name, bool dontBroadcast)
{
    char cappers[SL_MAX_CLIENTS + 1];
    event.GetString("cappers", cappers, sizeof(cappers));
    for (int i = 0; cappers[i] != '\0'; i++)  // one character per capper: the client index
    {
        int client = cappers[i];
        if (client > 0 && client <= MaxClients)
        {
            g_capturedAt[client] = GetEngineTime();
        }
    }
    SL_Capture(NowMs(), TeamSide(event.GetInt("team")));
    DrainActions();
}

int TeamSide(int team)
{
    return team == view_as<int>(TFTeam_Red) ? SL_A : (team == view_as<int>(TFTeam_Blue) ? SL_B : SL_NONE);
}

public void Event_FlagEvent(Event event, const char[] name, bool dontBroadcast)
{
    if (event.GetInt("eventtype") != view_as<int>(TF_FLAGEVENT_CAPTURED))
    {
        return;
    }
    int client = event.GetInt("player");
    if (client > 0 && client <= MaxClients && IsClientInGame(client))
    {
        g_capturedAt[client] = GetEngineTime();
        SL_Capture(NowMs(), TeamSide(GetClientTeam(client)));
        DrainActions();
    }
}

public Action Timer_Tick(Handle timer)
{
    if (Active())
    {
        SL_Tick(NowMs());
        DrainActions();
    }
    CheckFallback();
    MovesDue();
    SendNextReport();  // a retry whose time has come (SD_NextDue says)
    return Plugin_Continue;
}

// --- actions ------------------------------------------------------------------------------

void DrainActions()
{
    SLAction action;
    while (SL_NextAction(action))
    {
        switch (action.type)
        {
            case SL_ACT_REPORT:
            {
                SD_Add(g_slReport);
                LogDrops();
                SendNextReport();
            }
            case SL_ACT_REQUEST_SPLITS:
            {
                RequestSplits(false);
            }
            case SL_ACT_SCRAMBLE:
            {
                if (!g_scrambleQuiet)
                {
                    PrintToChatAll("%t", "Synelo Scramble Next Round");
                }
            }
            case SL_ACT_MOVE:
            {
                if (action.reason == SL_MOVE_ODD_JOINER || action.reason == SL_MOVE_SECTORS_EDGE)
                {
                    MoveChosen(action.arg, action.to, action.reason);
                }
            }
            case SL_ACT_AUTOBALANCE:
            {
                RequestAutobalance();
            }
        }
    }
}

void StartDuel()
{
    ConVar cv = FindConVar("tf_arena_override_team_size");
    if (cv == null || g_duel)
    {
        return;
    }
    cv.GetString(g_savedTeamSize, sizeof(g_savedTeamSize));
    cv.SetInt(1);
    g_duel = true;
    PrintToChatAll("%t", "Synelo Duel");
}

// --- HTTP ---------------------------------------------------------------------------------

HTTPRequest NewRequest(const char[] path)
{
    char base[256];
    char pool[64];
    char url[512];
    g_cvUrl.GetString(base, sizeof(base));
    g_cvPool.GetString(pool, sizeof(pool));
    FormatEx(url, sizeof(url), "%s/v1/pools/%s/%s", base, pool, path);
    return NewRequestAt(url);
}

// A request to any URL of the service, with the server token.
HTTPRequest NewRequestAt(const char[] url)
{
    char token[256];
    g_cvToken.GetString(token, sizeof(token));
    HTTPRequest request = new HTTPRequest(url);
    request.SetHeader("Authorization", "Bearer %s", token);
    request.SetHeader("Accept", "application/json");
    request.ConnectTimeout = g_cvTimeout.IntValue;
    request.Timeout = g_cvTimeout.IntValue;
    return request;
}

// Posts a body built as text; false when it could not be sent at all.
bool PostText(const char[] path, const char[] body, HTTPRequestCallback callback, any value)
{
    if (!g_ripOk)
    {
        return false;
    }
    JSONObject data = JSONObject.FromString(body);
    if (data == null)
    {
        LogError("synelo: built a body that is not JSON (%s): %s", path, body);
        return false;
    }
    HTTPRequest request = NewRequest(path);
    request.Post(data, callback, value);
    delete data;
    return true;
}

void NoteStatus(int status)
{
    g_lastStatus = status;
    g_lastStatusAt = GetEngineTime();
    // A wrong token or pool makes the service as useless as an outage: the fallback counts it.
    bool refused = status == 401 || status == 403 || status == 404;
    if (refused && !g_refusalLogged)
    {
        g_refusalLogged = true;  // once a map: every request gets the same answer
        char pool[64];
        g_cvPool.GetString(pool, sizeof(pool));
        LogError("synelo: the service refused this server (HTTP %d): %s", status,
            status == 404 ? "check that sm_synelo_pool names a pool of the service" : "check sm_synelo_token (a server token of the service, for this pool)");
    }
    if (status == 0 || status >= 500 || refused)
    {
        if (g_unreachableSince < 0.0)
        {
            g_unreachableSince = g_lastStatusAt;
        }
        return;
    }
    g_refusalLogged = false;
    g_unreachableSince = -1.0;
    if (g_fallback)
    {
        g_fallback = false;
        LogAction(-1, -1, "synelo: the service answers again; TF2's own autobalance and scrambles are off");
        if (Active())
        {
            OverrideTf2Balance();
        }
    }
}

// Called every second: hands balancing back to TF2 while the service stays unreachable.
void CheckFallback()
{
    float limit = g_cvFallback.FloatValue;
    if (g_fallback || !Active() || limit <= 0.0 || g_unreachableSince < 0.0
        || GetEngineTime() - g_unreachableSince < limit)
    {
        return;
    }
    g_fallback = true;
    RestoreTf2Balance();
    LogAction(-1, -1, "synelo: the service has been unreachable or refusing for %.0f s; TF2's own autobalance and scrambles are back on until it answers",
        GetEngineTime() - g_unreachableSince);
}

// Looks the player up, sending their name (POST players/lookup): rating, rounds, place and the
// pool's shadow length come back.
void LookUp(int client)
{
    if (!g_ripOk || !Active())
    {
        return;
    }
    char name[MAX_NAME_LENGTH];
    if (GetClientName(client, name, sizeof(name)))
    {
        SL_SetName(g_clientId[client], name);
    }
    PostLookup(client, OnLookUp, GetClientUserId(client));
}

public void OnLookUp(HTTPResponse response, any userid, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    if (status != 200)
    {
        if (status != 401 && status != 403 && status != 404)  // NoteStatus said why, once
        {
            LogError("synelo: lookup failed: HTTP %d %s", status, error);
        }
        return;
    }
    int client = GetClientOfUserId(userid);
    if (client <= 0 || !ReadLookup(response, client))
    {
        return;
    }
    Api_RatingsLoaded(client);
    g_clientGreet[client] = true;
    if (IsClientInGame(client))
    {
        Greet(client);
    }
}

public void OnClientPutInServer(int client)
{
    if (g_clientGreet[client])
    {
        Greet(client);
    }
}

// The player's own rating, only once it is visible (after the shadow period).
void Greet(int client)
{
    g_clientGreet[client] = false;
    if (g_clientVisible[client])
    {
        PrintToChat(client, "%t", "Synelo Your Rating", g_clientRating[client], g_clientRounds[client]);
    }
    else
    {
        PrintToChat(client, "%t", "Synelo Your Rating Hidden", g_clientRounds[client], g_shadowRounds);
    }
}

// Reads rating, visible and rounds_played (lookup answers and report answers have them).
void StoreRating(int client, JSONObject player)
{
    if (player.HasKey("after"))
    {
        g_clientRating[client] = player.GetInt("after");
    }
    else
    {
        g_clientRating[client] = player.GetInt("rating");
    }
    g_clientVisible[client] = player.GetBool("visible");
    g_clientRounds[client] = player.GetInt("rounds_played");
    g_clientKnown[client] = true;
    SL_SetRating(g_clientId[client], g_clientRating[client]);
    SL_SetPubPower(g_clientId[client], g_clientRating[client], false);
}

void SendNextReport()
{
    if (!g_ripOk)
    {
        return;
    }
    if (!SD_NextDue(NowMs(), g_body, sizeof(g_body)))
    {
        LogDrops();  // none can go now: more than SD_BUFFER waiting drops the oldest
        return;      // none waiting, one in flight, or the retry is not due yet
    }
    if (SD_Probing())
    {
        LogError("synelo: the oldest round report failed %d times in a row (HTTP %d); trying the one behind it (docs/client.md, Report delivery policy)",
            SD_SUSPECT_AFTER, g_sdStreakStatus);
    }
    if (!PostText("rounds", g_body, OnReport, 0))
    {
        SD_ResultAt(0, SD_NO_RETRY_AFTER, NowMs());
        LogDrops();
    }
}

// Logs the reports the buffer lost since the last call (docs/client.md, "Report delivery
// policy"): dropped (it was full), set aside (it kept failing while the one behind it was
// accepted) or refused (a 4xx). Each goes to the error log with its round_id and, with its
// full body on a line of its own, to logs/synelo_reports.log, so it can be sent again by hand.
void LogDrops()
{
    int n = SD_TakeDropped();
    if (n > 0)
    {
        LogError("synelo: the report buffer is full; dropped the %d oldest round report(s) (%d in all)",
            n, g_sdDropped);
    }
    int status;
    SDLost kind = SD_TakeLost(g_body, sizeof(g_body), status);
    if (kind == SDLost_None)
    {
        return;
    }
    char why[128];
    switch (kind)
    {
        case SDLost_Dropped:
        {
            Format(why, sizeof(why), "dropped (the buffer holds %d)", SD_BUFFER);
        }
        case SDLost_SetAside:
        {
            Format(why, sizeof(why), "set aside (HTTP %d %d times in a row; the report behind it was accepted)",
                status, SD_SUSPECT_AFTER);
        }
        default:
        {
            Format(why, sizeof(why), "refused (HTTP %d)", status);
        }
    }
    LogReportBody(why);
}

// The report in g_body, `why` it was not delivered: to the error log with its round id, and
// with its whole body to logs/synelo_reports.log, to be sent again by hand.
void LogReportBody(const char[] why)
{
    char id[SD_ROUND_ID_LEN];
    SD_RoundId(g_body, id, sizeof(id));
    char path[PLATFORM_MAX_PATH];
    BuildPath(Path_SM, path, sizeof(path), "logs/synelo_reports.log");
    LogError("synelo: round report %s %s; its body is in %s", id, why, path);
    LogToFile(path, "round report %s %s; its body:", id, why);
    File file = OpenFile(path, "a");
    if (file != null)
    {
        file.WriteString(g_body, false);  // not formatted: the whole body, however long
        file.WriteString("\n", false);
        delete file;
    }
}

// The report buffer lives in memory only: the reports still waiting when the plugin unloads
// (a reload, a plugin update, a clean server shutdown) are logged with their bodies. A crash
// loses them without a trace.
void LogWaitingReports()
{
    for (int i = 0; i < SD_Count(); i++)
    {
        if (SD_Peek(i, g_body, sizeof(g_body)))
        {
            LogReportBody("not delivered before the plugin unloaded");
        }
    }
}

public void OnReport(HTTPResponse response, any value, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    int winner = ReportWinner();  // of the report in flight, the oldest waiting
    int retryAfter = SD_NO_RETRY_AFTER;
    char header[32];
    if (status != 0 && response.GetHeader("Retry-After", header, sizeof(header)))
    {
        retryAfter = SD_ParseRetryAfter(header);
    }
    SDOutcome outcome = SD_ResultAt(status, retryAfter, NowMs());
    LogDrops();
    switch (outcome)
    {
        case SD_DELIVERED:
        {
            JSONObject data = view_as<JSONObject>(response.Data);
            JSONArray players = view_as<JSONArray>(data.Get("players"));
            if (players != null)
            {
                char id[SL_ID_LEN];
                for (int i = 0; i < players.Length; i++)
                {
                    JSONObject player = view_as<JSONObject>(players.Get(i));
                    player.GetString("steam_id", id, sizeof(id));
                    int client = ClientById(id);
                    if (client > 0)
                    {
                        StoreRating(client, player);
                    }
                    delete player;
                }
                delete players;
            }
            Api_RoundRated(winner);
            SendNextReport();
        }
        case SD_REJECTED:
        {
            SendNextReport();  // LogDrops logged the refused report and its body
        }
        case SD_FAILED:
        {
            LogError("synelo: round report not delivered (HTTP %d %s%s); %d report(s) buffered, next attempt in %d s (%s)",
                status, error,
                status == 401 || status == 403 || status == 404 ? "; check sm_synelo_token and sm_synelo_pool" : "",
                SD_Count(), SD_RetryDelayMs() / 1000,
                SD_RetryBy() == SDRetry_RetryAfter ? "Retry-After" : "backoff");
        }
    }
}

// TF2's team number of the winner in the oldest waiting report (2 RED, 3 BLU, 0 a draw).
int ReportWinner()
{
    if (!SD_Peek(0, g_body, sizeof(g_body)))
    {
        return 0;
    }
    if (StrContains(g_body, "\"winner\":\"A\"") != -1)
    {
        return view_as<int>(TFTeam_Red);
    }
    return StrContains(g_body, "\"winner\":\"B\"") != -1 ? view_as<int>(TFTeam_Blue) : 0;
}

void RequestSplits(bool thenScramble)
{
    if (thenScramble)
    {
        g_scrambleAfterSplits = true;
    }
    if (g_splitsInFlight || !g_ripOk || SL_EligibleCount() < 4)
    {
        return;  // (fewer than 4 eligible players: no 2v2 to ask for)
    }
    char parties[SL_PARTIES_LEN];
    SG_PartiesJson(parties, sizeof(parties), SG_Eligible);
    if (!SL_BuildSplitsBody(g_body, sizeof(g_body), parties))
    {
        return;
    }
    g_splitsInFlight = PostText("splits", g_body, OnSplits, 0);
}

public void OnSplits(HTTPResponse response, any value, const char[] error)
{
    g_splitsInFlight = false;
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    if (status == 200)
    {
        JSONObject data = view_as<JSONObject>(response.Data);
        JSONArray splits = view_as<JSONArray>(data.Get("splits"));
        if (splits != null)
        {
            SC_Clear();
            char id[SL_ID_LEN];
            for (int i = 0; i < splits.Length; i++)
            {
                JSONObject split = view_as<JSONObject>(splits.Get(i));
                int s = SC_Begin(split.GetInt("k"));
                JSONArray a = view_as<JSONArray>(split.Get("A"));
                JSONArray b = view_as<JSONArray>(split.Get("B"));
                for (int j = 0; a != null && j < a.Length; j++)
                {
                    a.GetString(j, id, sizeof(id));
                    SC_Add(s, SL_A, id);
                }
                for (int j = 0; b != null && j < b.Length; j++)
                {
                    b.GetString(j, id, sizeof(id));
                    SC_Add(s, SL_B, id);
                }
                delete a;
                delete b;
                delete split;
            }
            delete splits;
            SC_Filled(NowMs());
        }
    }
    else
    {
        LogError("synelo: splits request failed (HTTP %d %s); keeping the cached splits", status, error);
    }
    if (g_scrambleAfterSplits)
    {
        g_scrambleAfterSplits = false;
        if (g_preRound && SL_ScramblePending())
        {
            ApplyScramble(false, status != 200);  // no answer: the local split from cached ratings
        }
    }
}

void TryScramble()
{
    if (!ApplyScramble(true, !g_ripOk))
    {
        // No usable cached split: ask now, apply if the answer comes before the doors open;
        // otherwise the scramble stays pending for the next round start.
        RequestSplits(true);
    }
}

// Applies the usable cached split (outside arena, fitted to the players of the moment), or with
// `fallback` the local split from cached ratings; false (still pending) when there is none.
bool ApplyScramble(bool quiet, bool fallback = false)
{
    SLWhyName(SL_ScrambleWhy(), g_lastScrambleWhy, sizeof(g_lastScrambleWhy));
    if (SL_ScrambleWhy() == SL_WHY_ADMIN && g_scrambleByVote)
    {
        strcopy(g_lastScrambleWhy, sizeof(g_lastScrambleWhy), "vote");
    }
    int s = SC_TakeScramble(fallback);
    if (s == -1)
    {
        if (!quiet)
        {
            LogMessage("synelo: no usable split; the scramble stays pending");
        }
        return false;
    }
    bool swap = SC_Swap(s);  // the naming of the split that changes fewer players' teams
    int planned[SL_MAX_CLIENTS + 1];
    PlanScramble(s, swap, planned);
    for (int client = 1; client <= MaxClients; client++)
    {
        int team = planned[client];
        if (team == 0 || GetClientTeam(client) == team)
        {
            continue;
        }
        bool alive = IsPlayerAlive(client);
        g_moveSide[client] = SL_NONE;  // a waiting F11 move is overtaken by the scramble
        SwitchTeam(client, team, alive);
        int side = team == view_as<int>(TFTeam_Red) ? SL_A : (team == view_as<int>(TFTeam_Blue) ? SL_B : SL_WAITING);
        SG_TeamChange(NowMs(), g_clientId[client], side);  // the lock below is on this side
        if (team != view_as<int>(TFTeam_Spectator) && (alive || g_preRound))
        {
            TF2_RespawnPlayer(client);
            if (!g_preRound)
            {
                PrintCenterText(client, "%t", "Synelo Scrambled Notice");
            }
        }
        else if (team == view_as<int>(TFTeam_Spectator))
        {
            PrintToChat(client, "%t", "Synelo Waiting To Play");
        }
    }
    int red = 0;
    int blu = 0;
    for (int client = 1; client <= MaxClients; client++)
    {
        if (planned[client] != 0)
        {
            red += GetClientTeam(client) == view_as<int>(TFTeam_Red) ? 1 : 0;
            blu += GetClientTeam(client) == view_as<int>(TFTeam_Blue) ? 1 : 0;
        }
    }
    PrintToChatAll("%t", "Synelo Scrambled", red, blu);
    LogAction(-1, -1, "synelo: scrambled the teams by rating%s, %d v %d (%s)",
        !SC_IsFallback(s) ? "" : (SL_EligibleCount() < 4 ? " (local split: too few players to ask the service)"
            : " (local split: the service did not answer)"), red, blu, g_lastScrambleWhy);
    g_scrambleByVote = false;
    SG_Scrambled(NowMs());  // the team lock starts, and the vote cooldown
    DrainCommunity();
    Api_Scrambled();
    return true;
}

// Each eligible player's team after split `s` (0: not eligible). A player who may not move
// (the immunity flag, or busy in a live round) stays; for each, the movable player planned
// for the team they stay on whose rating is nearest theirs takes the team they were planned
// for, so the sizes stay ⌊n/2⌋ and ⌈n/2⌉ and the sums stay close.
void PlanScramble(int s, bool swap, int[] planned)
{
    int red = view_as<int>(TFTeam_Red);
    int blu = view_as<int>(TFTeam_Blue);
    bool held[SL_MAX_CLIENTS + 1];
    for (int client = 1; client <= MaxClients; client++)
    {
        planned[client] = 0;
        if (!IsClientInGame(client) || g_clientId[client][0] == '\0' || !SL_IsEligibleId(g_clientId[client]))
        {
            continue;
        }
        int side = SC_SideInNamed(s, g_clientId[client], swap);
        planned[client] = side == SL_A ? red : (side == SL_B ? blu : view_as<int>(TFTeam_Spectator));
        held[client] = GetClientTeam(client) != planned[client] && !MayScramble(client);
    }
    for (int client = 1; client <= MaxClients; client++)
    {
        if (!held[client])
        {
            continue;
        }
        int stays = GetClientTeam(client);
        int wanted = planned[client];
        planned[client] = stays;
        if ((stays != red && stays != blu) || (wanted != red && wanted != blu))
        {
            continue;
        }
        int best = 0;
        for (int other = 1; other <= MaxClients; other++)
        {
            if (planned[other] == stays && !held[other] && other != client
                && (GetClientTeam(other) == wanted || MayScramble(other))
                && (best == 0 || RatingGap(other, client) < RatingGap(best, client)))
            {
                best = other;
            }
        }
        if (best != 0)
        {
            planned[best] = wanted;
        }
    }
}

bool MayScramble(int client)
{
    return !SG_IsImmune(g_clientId[client]) && (g_preRound || !IsBusy(client));
}

int RatingGap(int a, int b)
{
    int gap = g_clientRating[a] - g_clientRating[b];
    return gap < 0 ? -gap : gap;
}

// ChangeClientTeam without the death: TF2 kills a live player who changes team (a suicide on
// the scoreboard, and a player_death inside this call); marked dead for the change, they are
// not (the usual way of balancing plugins), and are respawned by the caller.
void SwitchTeam(int client, int team, bool alive)
{
    if (alive)
    {
        SetEntProp(client, Prop_Send, "m_lifeState", 2);  // LIFE_DEAD
    }
    ChangeClientTeam(client, team);
    if (alive)
    {
        SetEntProp(client, Prop_Send, "m_lifeState", 0);  // LIFE_ALIVE
    }
}

// Moves a player for `reason` (odd_joiner, f11, sectors_edge; admin: `admin` is the client
// who asked, 0 the console): logged, announced, and a live player is told on screen why.
// Every move's LogAction line ends with its reason in brackets, "(f11)", "(admin)".
void MoveClient(int client, int side, const char[] reason, int admin = -1)
{
    int team = side == SL_A ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue);
    if (GetClientTeam(client) != team)
    {
        bool alive = IsPlayerAlive(client);
        bool byAdmin = admin != -1;
        SwitchTeam(client, team, alive);
        if (alive)
        {
            TF2_RespawnPlayer(client);  // a dead player respawns on the new team as usual
            PrintCenterText(client, "%t", byAdmin ? "Synelo Admin Moved Notice" : "Synelo Moved Notice",
                side == SL_A ? "RED" : "BLU");
        }
        PrintToChatAll("%t", byAdmin ? "Synelo Admin Moved" : "Synelo Moved", client, side == SL_A ? "RED" : "BLU");
        if (byAdmin)
        {
            LogAction(admin, client, "\"%L\" moved \"%L\" to %s with synelo (%s)", admin, client,
                side == SL_A ? "RED" : "BLU", reason);
        }
        else
        {
            LogAction(-1, client, "synelo: moved %L to %s (%s)", client, side == SL_A ? "RED" : "BLU", reason);
        }
    }
}

// The logic moved a player (the odd joiner, or Sector's Edge's dying player); make it so,
// unless that player must not move now.
void MoveChosen(int index, int side, SLMoveReason reason)
{
    int client = ClientById(g_slPlayers[index].id);
    if (client <= 0)
    {
        return;
    }
    if (TooLateToMove() || !MayMove(client))
    {
        // Not now: tell the logic where the player really is (it looks at the teams again).
        SL_TeamChange(NowMs(), g_slPlayers[index].id, ClientSide(client, GetClientTeam(client)));
        return;
    }
    MoveClient(client, side, reason == SL_MOVE_SECTORS_EDGE ? "sectors_edge" : "odd_joiner");
    NoteMoved(client, side);
}

// Not moved while alive: übercharged, carrying the intelligence, a medic with a built charge
// (moving them throws the charge away), or a player who captured in the last 30 s.
bool IsLocked(int client)
{
    if (TF2_IsPlayerInCondition(client, TFCond_Ubercharged)
        || TF2_IsPlayerInCondition(client, TFCond_UberchargedCanteen)
        || TF2_IsPlayerInCondition(client, TFCond_UberchargedHidden))
    {
        return true;
    }
    if (g_capturedAt[client] > 0.0 && GetEngineTime() - g_capturedAt[client] < SYN_CAPTURE_IMMUNE_S)
    {
        return true;
    }
    if (TF2_GetPlayerClass(client) == TFClass_Medic)
    {
        int medigun = GetPlayerWeaponSlot(client, TFWeaponSlot_Secondary);
        if (medigun != -1 && HasEntProp(medigun, Prop_Send, "m_flChargeLevel")
            && GetEntPropFloat(medigun, Prop_Send, "m_flChargeLevel") >= 1.0)
        {
            return true;
        }
    }
    return HasEntProp(client, Prop_Send, "m_hItem") && GetEntPropEnt(client, Prop_Send, "m_hItem") != -1;
}

// Seconds left before a round timer ends the round, -1 when no timer runs (or in setup).
// A map may have several team_round_timers: one per stage on multi-stage attack/defend maps
// (the stages not in play are disabled), one per team in KOTH (the point holder's runs, the
// other is paused: the round ends when the holder's runs out), and the sudden death timer
// TF2 adds and shows in the HUD. So: of the enabled timers that run (m_bIsDisabled,
// m_bTimerPaused), the one shown in the HUD (m_bShowInHUD) if any, and the least time left.
float RoundTimeLeft()
{
    if (GameRules_GetProp("m_bInSetup"))
    {
        return -1.0;
    }
    float best = -1.0;
    bool bestShown = false;
    int timer = -1;
    while ((timer = FindEntityByClassname(timer, "team_round_timer")) != -1)
    {
        if (GetEntProp(timer, Prop_Send, "m_bIsDisabled") || GetEntProp(timer, Prop_Send, "m_bTimerPaused"))
        {
            continue;
        }
        float left = GetEntPropFloat(timer, Prop_Send, "m_flTimerEndTime") - GetGameTime();
        left = left < 0.0 ? 0.0 : left;
        bool shown = GetEntProp(timer, Prop_Send, "m_bShowInHUD") != 0;
        if (best < 0.0 || (shown && !bestShown) || (shown == bestShown && left < best))
        {
            best = left;
            bestShown = shown;
        }
    }
    return best;
}

bool TooLateToMove()
{
    float left = RoundTimeLeft();
    return left >= 0.0 && left < g_cvCutoff.FloatValue;
}

void RequestAutobalance()
{
    if (!g_ripOk || TooLateToMove())
    {
        return;
    }
    char locked[SL_MAX_CLIENTS + 1][SL_ID_LEN];
    char alive[SL_MAX_CLIENTS + 1][SL_ID_LEN];
    int count = 0;
    int aliveCount = 0;
    for (int client = 1; client <= MaxClients; client++)
    {
        if (!IsClientInGame(client) || g_clientId[client][0] == '\0' || !SL_IsTeam(ClientSide(client, GetClientTeam(client))))
        {
            continue;
        }
        if (!MayMove(client))
        {
            strcopy(locked[count++], SL_ID_LEN, g_clientId[client]);  // immune, busy or moved lately
        }
        else if (IsPlayerAlive(client))
        {
            strcopy(alive[aliveCount++], SL_ID_LEN, g_clientId[client]);  // moved only on death: dead ones first
        }
    }
    char parties[SL_PARTIES_LEN];
    SG_PartiesJson(parties, sizeof(parties), SG_OnTeams);
    if (SL_BuildAutobalanceBody(g_body, sizeof(g_body), locked, count, alive, aliveCount, parties))
    {
        PostText("autobalance", g_body, OnAutobalance, 0);
    }
}

public void OnAutobalance(HTTPResponse response, any value, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    if (status != 200)
    {
        LogError("synelo: autobalance request failed (HTTP %d %s)", status, error);
        return;
    }
    if (TooLateToMove())
    {
        return;
    }
    JSONObject data = view_as<JSONObject>(response.Data);
    JSONArray moves = view_as<JSONArray>(data.Get("moves"));
    if (moves == null)
    {
        return;
    }
    char id[SL_ID_LEN];
    char to[8];
    for (int i = 0; i < moves.Length; i++)
    {
        JSONObject move = view_as<JSONObject>(moves.Get(i));
        move.GetString("steam_id", id, sizeof(id));
        move.GetString("to", to, sizeof(to));
        delete move;
        int client = ClientById(id);
        if (client <= 0 || !MayMove(client))
        {
            continue;  // gone, or picked up the intelligence / got uber since the request
        }
        int side = StrEqual(to, "A") ? SL_A : SL_B;
        if (IsPlayerAlive(client) && g_cvMoveWait.FloatValue > 0.0)
        {
            // Dead players are moved first: a live one is moved when they next die, or after
            // sm_synelo_move_wait seconds if they do not.
            g_moveSide[client] = side;
            g_moveBy[client] = GetEngineTime() + g_cvMoveWait.FloatValue;
            continue;
        }
        ApplyF11Move(client, side);
    }
    delete moves;
    DrainActions();
}

void ApplyF11Move(int client, int side)
{
    g_moveSide[client] = SL_NONE;
    if (TooLateToMove() || !MayMove(client))
    {
        return;
    }
    if (SL_ApplyMove(NowMs(), g_clientId[client], side, SL_MOVE_F11))
    {
        MoveClient(client, side, "f11");
        NoteMoved(client, side);
    }
}

// Every second: the F11 moves that waited for a death and waited long enough.
void MovesDue()
{
    float now = GetEngineTime();
    for (int client = 1; client <= MaxClients; client++)
    {
        if (g_moveSide[client] != SL_NONE && now >= g_moveBy[client])
        {
            if (IsClientInGame(client))
            {
                ApplyF11Move(client, g_moveSide[client]);
            }
            g_moveSide[client] = SL_NONE;
        }
    }
    DrainActions();
}

// --- admin commands -----------------------------------------------------------------------

public Action Cmd_Status(int client, int args)
{
    char url[256];
    char mode[16];
    g_cvUrl.GetString(url, sizeof(url));
    SL_ModeName(g_slMode, mode, sizeof(mode));
    ReplyToCommand(client, "[synelo] enabled: %s, mode: %s, service: %s", Active() ? "yes" : "no",
        mode, url);
    if (!g_ripOk)
    {
        ReplyToCommand(client, "[synelo] REST in Pawn (rip.ext) missing: synelo sits out, TF2's own balancing stays on");
    }
    else if (g_lastStatus == -1)
    {
        ReplyToCommand(client, "[synelo] service: no request yet");
    }
    else
    {
        ReplyToCommand(client, "[synelo] service: %s (last answer HTTP %d, %.0f s ago)",
            (g_lastStatus == 401 || g_lastStatus == 403) ? "token refused"
                : (g_lastStatus == 404 ? "pool not found"
                : ((g_lastStatus >= 200 && g_lastStatus < 500) ? "reachable" : "unreachable")),
            g_lastStatus, GetEngineTime() - g_lastStatusAt);
    }
    ReplyToCommand(client, "[synelo] report buffer: %d/%d waiting, %d dropped, %d refused",
        SD_Count(), SD_BUFFER, g_sdDropped, g_sdRejected);
    if (SD_Count() > 0 && SD_RetryAt() != -1)
    {
        int wait = SD_RetryAt() - NowMs();
        ReplyToCommand(client, "[synelo] next report attempt in %d s (%d failure(s) in a row)",
            wait > 0 ? (wait + 999) / 1000 : 0, SD_Failures());
    }
    if (g_scUpdated == -1)
    {
        ReplyToCommand(client, "[synelo] split cache: empty");
    }
    else
    {
        ReplyToCommand(client, "[synelo] split cache: %d split(s), %d s old", g_scCount,
            (NowMs() - g_scUpdated) / 1000);
    }
    ReplyToCommand(client, "[synelo] scramble pending: %s (reason %d)", SL_ScramblePending() ? "yes" : "no", SL_ScrambleWhy());
    for (int other = 1; other <= MaxClients; other++)
    {
        // (a local, not the call's result, as a format argument: see docs/emulator.md's pysmx
        // heap note)
        int attempts = IsClientInGame(other) && g_clientId[other][0] != '\0' ? SG_Attempts(g_clientId[other]) : 0;
        if (attempts > 0)
        {
            ReplyToCommand(client, "[synelo] %N: %d team change(s) refused by the team lock this map",
                other, attempts);
        }
    }
    char why[32];
    for (int other = 1; other <= MaxClients; other++)
    {
        if (IsClientInGame(other) && g_clientId[other][0] != '\0' && MoveHoldName(other, why, sizeof(why)))
        {
            ReplyToCommand(client, "[synelo] %N: held from moves (%s)", other, why);
        }
    }
    return Plugin_Handled;
}

// Why autobalance may not move the client now, as sm_synelo_status and sm_synelo_move say it:
// "immune", "busy" or "cooldown, N s left"; false when they may be moved.
bool MoveHoldName(int client, char[] buffer, int maxlength)
{
    int wait;
    SGWhy why = MoveHold(client, wait);
    if (why == SGWhy_Cooldown)
    {
        Format(buffer, maxlength, "cooldown, %d s left", wait);
    }
    else
    {
        strcopy(buffer, maxlength, why == SGWhy_Immune ? "immune" : "busy");
    }
    return why != SGWhy_None;
}

// An admin moves a player to the other team, under the rules autobalance keeps: never an
// immune player, a busy one, or one moved within sm_synelo_move_cooldown. The move counts as
// one: the player is locked on the new team and their cooldown starts. Teams the move leaves
// 2 or more apart are evened by autobalance after its delay, as after a leaver (F11), by
// moving others.
public Action Cmd_Move(int client, int args)
{
    char pattern[MAX_TARGET_LENGTH];
    char name[8];
    GetCmdArg(1, pattern, sizeof(pattern));
    GetCmdArg(2, name, sizeof(name));
    int side = StrEqual(name, "red", false) ? SL_A
        : ((StrEqual(name, "blue", false) || StrEqual(name, "blu", false)) ? SL_B : SL_NONE);
    if (args != 2 || side == SL_NONE)
    {
        ReplyToCommand(client, "[synelo] Usage: sm_synelo_move <target> <red|blue>");
        return Plugin_Handled;
    }
    int target = FindTarget(client, pattern, true, true);  // SourceMod's admin immunity too
    if (target == -1)
    {
        return Plugin_Handled;  // FindTarget has told the admin why
    }
    if (!Active())
    {
        ReplyToCommand(client, "[synelo] synelo does not balance this map (sm_synelo_status)");
        return Plugin_Handled;
    }
    int from = ClientSide(target, GetClientTeam(target));
    if (g_clientId[target][0] == '\0' || !SL_IsTeam(from))
    {
        ReplyToCommand(client, "[synelo] %N is not on RED or BLU yet (or not authorised)", target);
        return Plugin_Handled;
    }
    if (from == side)
    {
        ReplyToCommand(client, "[synelo] %N is on %s already", target, side == SL_A ? "RED" : "BLU");
        return Plugin_Handled;
    }
    char why[32];
    if (MoveHoldName(target, why, sizeof(why)))
    {
        ReplyToCommand(client, "[synelo] %N stays: held from moves (%s)", target, why);
        return Plugin_Handled;
    }
    SL_ApplyMove(NowMs(), g_clientId[target], side, SL_MOVE_ADMIN);
    SL_RosterChanged();  // a gap the move leaves starts autobalance's delay
    MoveClient(target, side, "admin", client);
    NoteMoved(target, side);
    DrainActions();
    ReplyToCommand(client, "[synelo] moved %N to %s", target, side == SL_A ? "RED" : "BLU");
    return Plugin_Handled;
}

// The reason of a scramble, as the game scripts and the log name it.
void SLWhyName(SLWhy why, char[] buffer, int maxlength)
{
    static const char names[][] = { "none", "waiting_ended", "arena_round_2", "streak",
        "attackers_timed_out", "full_rounds", "no_capture", "admin" };
    int i = view_as<int>(why);
    strcopy(buffer, maxlength, (i >= 0 && i < sizeof(names)) ? names[i] : "vote");
}

public Action Cmd_Scramble(int client, int args)
{
    LogAction(client, -1, "\"%L\" asked for a synelo scramble at the next round start", client);
    g_scrambleByVote = false;
    SL_ForceScramble(NowMs());
    DrainActions();
    ReplyToCommand(client, "[synelo] %t", "Synelo Scramble Next Round");
    return Plugin_Handled;
}

public Action Cmd_Rating(int client, int args)
{
    if (args < 1)
    {
        ReplyToCommand(client, "[synelo] Usage: sm_synelo_rating <target>");
        return Plugin_Handled;
    }
    char pattern[64];
    GetCmdArg(1, pattern, sizeof(pattern));
    char targetName[MAX_TARGET_LENGTH];
    int targets[SL_MAX_CLIENTS];
    bool tnIsMl;
    int count = ProcessTargetString(pattern, client, targets, sizeof(targets),
        COMMAND_FILTER_NO_BOTS | COMMAND_FILTER_CONNECTED, targetName, sizeof(targetName), tnIsMl);
    if (count <= 0)
    {
        ReplyToTargetError(client, count);
        return Plugin_Handled;
    }
    for (int i = 0; i < count; i++)
    {
        int target = targets[i];
        if (!g_clientKnown[target])
        {
            ReplyToCommand(client, "[synelo] %t", "Synelo Rating Unknown", target);
        }
        else if (g_clientVisible[target])
        {
            ReplyToCommand(client, "[synelo] %t", "Synelo Rating", target, g_clientRating[target],
                g_clientRounds[target]);
        }
        else
        {
            ReplyToCommand(client, "[synelo] %t", "Synelo Rating Hidden", target, g_clientRounds[target],
                g_shadowRounds);
        }
    }
    return Plugin_Handled;
}
