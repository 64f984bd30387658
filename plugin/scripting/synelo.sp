/**
 * synelo for Team Fortress 2: ratings, scrambles and autobalance from a synelo service.
 *
 * The decisions (participation, reports, triggers, the report buffer, the split cache, votes,
 * team locks, immunity, parties, command limits) live in
 * include/synelo/{logic,delivery,splits,community}.inc, which make no engine calls and are
 * tested under pysmx's VM; this file turns game events into their events and their actions
 * into HTTP requests (REST in Pawn 1.3) and team changes. synelo/community.sp has the player
 * commands and the team lock, synelo/api.sp the natives, forwards and admin menu.
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
#undef REQUIRE_PLUGIN
#include <adminmenu>

#define SYNELO_VERSION "0.1.0"
// The project's public home page. Still a placeholder: the project has no public address yet
// (set it here once it has one).
#define SYNELO_URL "https://github.com/"
#define SYN_BODY_LEN SL_REPORT_LEN

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

// TF2's own balancing, turned off while synelo is enabled and restored afterwards.
char g_tfCvars[][] = { "mp_autoteambalance", "mp_scrambleteams_auto", "tf_arena_max_streak" };
char g_tfOff[][] = { "0", "0", "0" };
char g_tfSaved[sizeof(g_tfCvars)][32];
bool g_tfOverridden;

bool g_ripOk;                 // every rip.ext native we use is available
char g_clientId[MAXPLAYERS + 1][SL_ID_LEN];
int g_clientRating[MAXPLAYERS + 1];
bool g_clientVisible[MAXPLAYERS + 1];
int g_clientRounds[MAXPLAYERS + 1];
bool g_clientKnown[MAXPLAYERS + 1];
bool g_clientGreet[MAXPLAYERS + 1];   // tell the player the rating once in game

bool g_preRound;              // between round start and the doors going up
bool g_waitSetup;             // the doors go up when the setup time ends
bool g_duel;                  // arena round 1: tf_arena_override_team_size is 1
char g_savedTeamSize[16];
bool g_splitsInFlight;
bool g_scrambleAfterSplits;   // apply the pending scramble when the splits arrive
float g_mapStartedAt;
int g_lastStatus = -1;        // last HTTP status from the service (0: unreachable)
float g_lastStatusAt;
char g_body[SYN_BODY_LEN];      // request bodies are built here (kept off the stack)

#include "synelo/community.sp"
#include "synelo/api.sp"

// --- loading ------------------------------------------------------------------------------

public APLRes AskPluginLoad2(Handle myself, bool late, char[] error, int err_max)
{
    SynRip_MarkOptional();
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
        "Game mode (arena, attack_defend, payload, koth, cp, ctf); empty: detect from the map");
    g_cvPolicy = CreateConVar("sm_synelo_autobalance", "f11",
        "Mid-round policy: f11 (odd joiner and F11 moves from the service) or sectors_edge");
    g_cvSeDelay = CreateConVar("sm_synelo_se_delay", "20",
        "sectors_edge: seconds after marking the stronger team before dying players move", _, true, 0.0);
    g_cvSeGap = CreateConVar("sm_synelo_se_power_gap", "10",
        "sectors_edge: team power difference that is unbalanced", _, true, 0.5);
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
    g_cvImmunityFlag = CreateConVar("sm_synelo_immunity_flag", "a",
        "Admin flag(s) that exempt a player from being moved (empty: nobody)");
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
    HookEvent("teamplay_round_stalemate", Event_RoundStalemate);
    HookEvent("teamplay_point_captured", Event_PointCaptured);
    HookEvent("teamplay_flag_event", Event_FlagEvent);

    RegAdminCmd("sm_synelo_status", Cmd_Status, ADMFLAG_GENERIC,
        "sm_synelo_status - service reachable, report buffer, split cache age");
    RegAdminCmd("sm_synelo_scramble", Cmd_Scramble, ADMFLAG_GENERIC,
        "sm_synelo_scramble - scramble at the next round start");
    RegAdminCmd("sm_synelo_rating", Cmd_Rating, ADMFLAG_GENERIC,
        "sm_synelo_rating <target> - a player's synelo rating");
    RegConsoleCmd("sm_rank", Cmd_Rank, "sm_rank [name] - your synelo rating and place, or a player's");
    RegConsoleCmd("sm_top", Cmd_Top, "sm_top - the 10 best of this server's pool");
    RegConsoleCmd("sm_balance", Cmd_Balance, "sm_balance - each team's chance to win now");
    RegConsoleCmd("sm_party", Cmd_Party, "sm_party <name> | accept | leave - play on one team");
    RegConsoleCmd("sm_scramble", Cmd_VoteScramble, "sm_scramble - vote to scramble the teams");
    RegConsoleCmd("sm_synelo_votescramble", Cmd_VoteScramble,
        "sm_synelo_votescramble - vote to scramble the teams");
    g_cvImmunityFlag.AddChangeHook(OnImmunityFlagChanged);
    HookEvent("player_changename", Event_NameChange);
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
            ... "synelo cannot reach its service: no lookups, no reports, no scrambles. "
            ... "Install addons/sourcemod/extensions/rip.ext.so and reload the plugin.",
            count, missing);
    }
}

public void OnConfigsExecuted()
{
    ConfigureLogic();
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
    SL_ConfigureSectorsEdge(StrEqual(policy, "sectors_edge"),
        RoundToNearest(g_cvSeDelay.FloatValue * 1000.0), RoundToNearest(g_cvSeGap.FloatValue * 2.0));
    Community_Configure();
}

public void OnPluginEnd()
{
    RestoreTf2Balance();
    RestoreTeamSize();
}

public void OnMapStart()
{
    char map[64];
    GetCurrentMap(map, sizeof(map));
    char serverId[64];
    ServerId(serverId, sizeof(serverId));
    char prefix[96];
    FormatEx(prefix, sizeof(prefix), "%s-%x", serverId, GetTime());
    g_mapStartedAt = GetEngineTime();
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
    CreateTimer(1.0, Timer_Tick, _, TIMER_REPEAT | TIMER_FLAG_NO_MAPCHANGE);
    g_mapChanging = false;
    CreateTimer(float(SYN_RECONNECT_S), Timer_ForgetGone, _, TIMER_FLAG_NO_MAPCHANGE);
}

public void OnMapEnd()
{
    RestoreTeamSize();
    g_mapChanging = true;  // SourceMod disconnects every client now; they come back after
}

void ServerId(char[] buffer, int maxlength)
{
    g_cvServerId.GetString(buffer, maxlength);
    if (buffer[0] == '\0')
    {
        FormatEx(buffer, maxlength, "tf2-%d", FindConVar("hostport").IntValue);
    }
}

SLMode DetectMode(const char[] map)
{
    char mode[32];
    g_cvMode.GetString(mode, sizeof(mode));
    if (mode[0] != '\0')
    {
        if (StrEqual(mode, "arena")) return SL_MODE_ARENA;
        if (StrEqual(mode, "attack_defend")) return SL_MODE_ATTACK_DEFEND;
        if (StrEqual(mode, "payload")) return SL_MODE_PAYLOAD;
        if (StrEqual(mode, "koth")) return SL_MODE_KOTH;
        if (StrEqual(mode, "ctf")) return SL_MODE_CTF;
        if (StrEqual(mode, "cp")) return SL_MODE_CP;
        LogError("sm_synelo_mode \"%s\" is not a mode; detecting it from the map", mode);
    }
    if (FindEntityByClassname(-1, "tf_logic_arena") != -1 || StrContains(map, "arena_") == 0)
    {
        return SL_MODE_ARENA;
    }
    if (FindEntityByClassname(-1, "tf_logic_koth") != -1 || StrContains(map, "koth_") == 0)
    {
        return SL_MODE_KOTH;
    }
    if (FindEntityByClassname(-1, "team_train_watcher") != -1 || StrContains(map, "pl_") == 0
        || StrContains(map, "plr_") == 0)
    {
        return SL_MODE_PAYLOAD;
    }
    if (FindEntityByClassname(-1, "item_teamflag") != -1 || StrContains(map, "ctf_") == 0)
    {
        return SL_MODE_CTF;
    }
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
    if (g_cvEnabled.BoolValue)
    {
        OverrideTf2Balance();
    }
    else
    {
        RestoreTf2Balance();
        RestoreTeamSize();
    }
}

void OverrideTf2Balance()
{
    if (g_tfOverridden)
    {
        return;
    }
    for (int i = 0; i < sizeof(g_tfCvars); i++)
    {
        ConVar cv = FindConVar(g_tfCvars[i]);
        g_tfSaved[i][0] = '\0';
        if (cv != null)
        {
            cv.GetString(g_tfSaved[i], sizeof(g_tfSaved[]));
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

bool Active()
{
    return g_cvEnabled.BoolValue;
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
    SL_Join(NowMs(), g_clientId[client], side);
    SG_Join(NowMs(), g_clientId[client], side, false);  // immunity: OnClientPostAdminCheck
    DrainActions();
    LookUp(client);
}

public void OnClientDisconnect(int client)
{
    if (g_clientId[client][0] != '\0')
    {
        SL_Leave(NowMs(), g_clientId[client]);
        if (!g_mapChanging)  // a map change keeps parties: Timer_ForgetGone sorts it out
        {
            SG_Leave(NowMs(), g_clientId[client]);
        }
        DrainActions();
        DrainCommunity();
    }
    g_clientId[client][0] = '\0';
    g_clientKnown[client] = false;
    g_clientGreet[client] = false;
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
    SL_TeamChange(NowMs(), g_clientId[client], ClientSide(client, event.GetInt("team")));
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
    int timer = FindEntityByClassname(-1, "team_round_timer");
    if (timer != -1 && GetEntProp(timer, Prop_Send, "m_nSetupTimeLength") > 0)
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

public void Event_RoundWin(Event event, const char[] name, bool dontBroadcast)
{
    int team = event.GetInt("team");
    int winner = team == view_as<int>(TFTeam_Red) ? SL_A : (team == view_as<int>(TFTeam_Blue) ? SL_B : SL_DRAW);
    RoundEnded(winner, event.GetInt("full_round") != 0);
}

public void Event_RoundStalemate(Event event, const char[] name, bool dontBroadcast)
{
    RoundEnded(SL_DRAW, event.GetInt("full_round") != 0);
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
                    MoveChosen(action.arg, action.to);
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
        LogError("synelo: lookup failed: HTTP %d %s", status, error);
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
        return;  // none waiting, one in flight, or the retry is not due yet
    }
    if (!PostText("rounds", g_body, OnReport, 0))
    {
        SD_ResultAt(0, SD_NO_RETRY_AFTER, NowMs());
        LogDrops();
    }
}

// Logs the reports the buffer dropped since the last call (it was full).
void LogDrops()
{
    int n = SD_TakeDropped();
    if (n > 0)
    {
        LogError("synelo: the report buffer is full; dropped the %d oldest round report(s) (%d in all)",
            n, g_sdDropped);
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
            LogError("synelo: the service refused a round report (HTTP %d); it is dropped", status);
            SendNextReport();
        }
        case SD_FAILED:
        {
            LogError("synelo: round report not delivered (HTTP %d %s); %d report(s) buffered, next attempt in %d s (%s)",
                status, error, SD_Count(), SD_RetryDelayMs() / 1000,
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
    char parties[SL_REPORT_LEN / 2];
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
            ApplyScramble(false);
        }
    }
}

void TryScramble()
{
    if (!ApplyScramble(true))
    {
        // No usable cached split: ask now, apply if the answer comes before the doors open;
        // otherwise the scramble stays pending for the next round start.
        RequestSplits(true);
    }
}

// Applies the largest usable cached split; false (still pending) when there is none.
bool ApplyScramble(bool quiet)
{
    int s = SC_TakeScramble();
    if (s == -1)
    {
        if (!quiet)
        {
            LogMessage("synelo: no usable split; the scramble stays pending");
        }
        return false;
    }
    bool swap = SC_Swap(s);  // the naming of the split that changes fewer players' teams
    for (int client = 1; client <= MaxClients; client++)
    {
        if (!IsClientInGame(client) || g_clientId[client][0] == '\0' || !SL_IsEligibleId(g_clientId[client]))
        {
            continue;
        }
        int side = SC_SideInNamed(s, g_clientId[client], swap);
        int team = side == SL_A ? view_as<int>(TFTeam_Red)
            : (side == SL_B ? view_as<int>(TFTeam_Blue) : view_as<int>(TFTeam_Spectator));
        if (GetClientTeam(client) != team
            && (SG_IsImmune(g_clientId[client]) || (!g_preRound && IsBusy(client))))
        {
            continue;  // the immunity flag, or busy in a live round: not moved
        }
        if (GetClientTeam(client) != team)
        {
            bool alive = IsPlayerAlive(client);
            ChangeClientTeam(client, team);
            SG_TeamChange(NowMs(), g_clientId[client], side);  // the lock below is on this side
            if (team != view_as<int>(TFTeam_Spectator) && (alive || g_preRound))
            {
                TF2_RespawnPlayer(client);
            }
            else
            {
                PrintToChat(client, "%t", "Synelo Waiting To Play");
            }
        }
    }
    PrintToChatAll("%t", "Synelo Scrambled", g_scK[s], g_scK[s]);
    SG_Scrambled(NowMs());  // the team lock starts, and the vote cooldown
    DrainCommunity();
    Api_Scrambled();
    return true;
}

void MoveClient(int client, int side)
{
    int team = side == SL_A ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue);
    if (GetClientTeam(client) != team)
    {
        bool alive = IsPlayerAlive(client);
        ChangeClientTeam(client, team);
        if (alive)
        {
            TF2_RespawnPlayer(client);  // a dead player respawns on the new team as usual
        }
        PrintToChatAll("%t", "Synelo Moved", client, side == SL_A ? "RED" : "BLU");
    }
}

// The logic moved a player (the odd joiner, or Sector's Edge's dying player); make it so,
// unless that player must not move now.
void MoveChosen(int index, int side)
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
    MoveClient(client, side);
    NoteMoved(client, side);
}

bool IsLocked(int client)
{
    if (TF2_IsPlayerInCondition(client, TFCond_Ubercharged)
        || TF2_IsPlayerInCondition(client, TFCond_UberchargedCanteen)
        || TF2_IsPlayerInCondition(client, TFCond_UberchargedHidden))
    {
        return true;
    }
    return HasEntProp(client, Prop_Send, "m_hItem") && GetEntPropEnt(client, Prop_Send, "m_hItem") != -1;
}

// Seconds left on the round timer, -1 when there is none.
float RoundTimeLeft()
{
    int timer = FindEntityByClassname(-1, "team_round_timer");
    if (timer == -1 || GetEntProp(timer, Prop_Send, "m_bTimerPaused"))
    {
        return -1.0;
    }
    return GetEntPropFloat(timer, Prop_Send, "m_flTimerEndTime") - GetGameTime();
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
    char locked[MAXPLAYERS + 1][SL_ID_LEN];
    int count = 0;
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && g_clientId[client][0] != '\0' && SL_IsTeam(ClientSide(client, GetClientTeam(client)))
            && !MayMove(client))
        {
            strcopy(locked[count++], SL_ID_LEN, g_clientId[client]);  // immune, busy or moved lately
        }
    }
    char parties[SL_REPORT_LEN / 2];
    SG_PartiesJson(parties, sizeof(parties), SG_OnTeams);
    if (SL_BuildAutobalanceBody(g_body, sizeof(g_body), locked, count, parties))
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
        if (SL_ApplyMove(NowMs(), id, side, SL_MOVE_F11))
        {
            MoveClient(client, side);
            NoteMoved(client, side);
        }
    }
    delete moves;
    DrainActions();
}

// --- admin commands -----------------------------------------------------------------------

public Action Cmd_Status(int client, int args)
{
    char url[256];
    g_cvUrl.GetString(url, sizeof(url));
    ReplyToCommand(client, "[synelo] enabled: %s, mode: %d, service: %s", Active() ? "yes" : "no",
        g_slMode, url);
    if (!g_ripOk)
    {
        ReplyToCommand(client, "[synelo] REST in Pawn (rip.ext) missing: the service is unreachable");
    }
    else if (g_lastStatus == -1)
    {
        ReplyToCommand(client, "[synelo] service: no request yet");
    }
    else
    {
        ReplyToCommand(client, "[synelo] service: %s (last answer HTTP %d, %.0f s ago)",
            (g_lastStatus >= 200 && g_lastStatus < 500) ? "reachable" : "unreachable",
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
        if (IsClientInGame(other) && g_clientId[other][0] != '\0' && SG_Attempts(g_clientId[other]) > 0)
        {
            ReplyToCommand(client, "[synelo] %N: %d team change(s) refused by the team lock this map",
                other, SG_Attempts(g_clientId[other]));
        }
    }
    return Plugin_Handled;
}

public Action Cmd_Scramble(int client, int args)
{
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
    int targets[MAXPLAYERS];
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
