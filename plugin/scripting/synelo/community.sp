/**
 * The community features around the round logic: player commands (!rank, !top, !balance,
 * !party, !scramble), the vote scramble, the team lock after a scramble or a move, immunity
 * from moves, and parties. The decisions are include/synelo/community.inc's (tested under
 * pysmx's VM with the shared event scripts); this file turns commands and engine events into
 * its events and its actions into chat, menus, HTTP requests and team changes.
 */

ConVar g_cvVoteRatio;
ConVar g_cvVoteMinPlayers;
ConVar g_cvVoteCooldown;
ConVar g_cvVoteDelay;
ConVar g_cvVoteRoundEnd;
ConVar g_cvTeamLock;
ConVar g_cvTeamLockSpectate;
ConVar g_cvMoveCooldown;
ConVar g_cvImmunityFlag;
ConVar g_cvParties;
ConVar g_cvPartySize;
ConVar g_cvCommandInterval;

enum
{
    SYN_RECONNECT_S = 90  // seconds after a map start for players to come back
}

bool g_scrambleQuiet;                // a vote's scramble: no "next round" message from the logic
int g_clientPlace[SL_MAX_CLIENTS + 1];   // place among the visible players, 0: not listed
int g_shadowRounds = -1;             // the pool's T, from the last lookup (-1: not known yet)
char g_sgText[SL_REPORT_LEN];        // request bodies of this file
int g_sgMoveWait;                    // the last move refusal's wait, seconds (MoveHold)

int Ms(ConVar cv)
{
    return RoundToNearest(cv.FloatValue * 1000.0);
}

void Community_Configure()
{
    SG_ConfigureVotes(g_cvVoteRatio.IntValue, g_cvVoteMinPlayers.IntValue, Ms(g_cvVoteCooldown),
        Ms(g_cvVoteDelay), g_cvVoteRoundEnd.BoolValue);
    SG_ConfigureGuards(Ms(g_cvTeamLock), g_cvTeamLockSpectate.BoolValue, Ms(g_cvMoveCooldown),
        g_cvParties.BoolValue, g_cvPartySize.IntValue, Ms(g_cvCommandInterval));
}

// Whether the client holds the immunity flags (sm_synelo_immunity_flag: all of them; root
// always does).
bool HasImmunity(int client)
{
    char flags[32];
    g_cvImmunityFlag.GetString(flags, sizeof(flags));
    int bits = ReadFlagString(flags);
    int mine = GetUserFlagBits(client);
    return bits != 0 && ((mine & bits) == bits || (mine & ADMFLAG_ROOT));
}

public void OnClientPostAdminCheck(int client)
{
    if (g_clientId[client][0] != '\0')
    {
        SG_SetImmune(NowMs(), g_clientId[client], HasImmunity(client));
    }
}

// The flag changed, or the admin cache was rebuilt: everyone's immunity anew.
void RecheckImmunity()
{
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && g_clientId[client][0] != '\0')
        {
            SG_SetImmune(NowMs(), g_clientId[client], HasImmunity(client));
        }
    }
}

public void OnImmunityFlagChanged(ConVar convar, const char[] oldValue, const char[] newValue)
{
    RecheckImmunity();
}

public void OnRebuildAdminCache(AdminCachePart part)
{
    RecheckImmunity();
}

public void Event_NameChange(Event event, const char[] name, bool dontBroadcast)
{
    int client = GetClientOfUserId(event.GetInt("userid"));
    char newName[MAX_NAME_LENGTH];
    event.GetString("newname", newName, sizeof(newName));
    if (client > 0 && g_clientId[client][0] != '\0')
    {
        SL_SetName(g_clientId[client], newName);
    }
}

// Busy mid-life: carrying the intelligence, übercharged (IsLocked), or an engineer with a
// building up: never moved while alive.
bool IsBusy(int client)
{
    if (!IsPlayerAlive(client))
    {
        return false;
    }
    if (IsLocked(client))
    {
        return true;
    }
    if (TF2_GetPlayerClass(client) != TFClass_Engineer)
    {
        return false;
    }
    static const char buildings[][] = { "obj_sentrygun", "obj_dispenser", "obj_teleporter" };
    for (int b = 0; b < sizeof(buildings); b++)
    {
        int entity = -1;
        while ((entity = FindEntityByClassname(entity, buildings[b])) != -1)
        {
            if (GetEntPropEnt(entity, Prop_Send, "m_hBuilder") == client)
            {
                return true;
            }
        }
    }
    return false;
}

// May the client be moved now (immunity, busy mid-life, move cooldown)?
bool MayMove(int client)
{
    int wait;
    return MoveHold(client, wait) == SGWhy_None;
}

// Why the client may not be moved now (SGWhy_None: they may), and for the move cooldown the
// seconds left in `wait`.
SGWhy MoveHold(int client, int &wait)
{
    SGWhy why = SG_MoveRequest(NowMs(), g_clientId[client], IsBusy(client));
    g_sgMoveWait = 0;
    DrainCommunity();
    wait = g_sgMoveWait;
    return why;
}

// A move made: the player is locked on the new side and their move cooldown starts.
void NoteMoved(int client, int side)
{
    SG_Moved(NowMs(), g_clientId[client], side);
    DrainCommunity();
}

// --- the rules' actions -------------------------------------------------------------------

void DrainCommunity()
{
    SGAction action;
    while (SG_NextAction(action))
    {
        int client = ClientById(action.player);
        switch (action.type)
        {
            case SGAct_VoteCounted:
            {
                PrintToChatAll("%t", "Synelo Vote Counted", client, action.arg, action.arg2);
            }
            case SGAct_VoteRefused:
            {
                if (client > 0)
                {
                    RefusalMessage(client, action.why, action.wait);
                }
            }
            case SGAct_Scramble:
            {
                VoteScramblePassed();
            }
            case SGAct_ScramblePending:
            {
                PrintToChatAll("%t", "Synelo Vote Passed Round End");
            }
            case SGAct_TeamRefused:
            {
                if (client > 0)
                {
                    PrintToChat(client, "%t", "Synelo Team Locked", action.wait);
                }
            }
            case SGAct_PlaceJoiner:
            {
                if (client > 0)
                {
                    PlaceJoiner(client);
                }
            }
            case SGAct_PartyInvited:
            {
                int target = ClientById(action.target);
                if (target > 0 && client > 0)
                {
                    PrintToChat(target, "%t", "Synelo Party Invite", client);
                    PrintToChat(client, "%t", "Synelo Party Invited", target);
                }
            }
            case SGAct_PartyJoined, SGAct_PartyLeft:
            {
                PartyMessage(action);
            }
            case SGAct_MoveRefused:
            {
                g_sgMoveWait = action.wait;  // MoveHold's answer; nobody is told
            }
            case SGAct_PartyRefused:
            {
                if (client > 0)
                {
                    RefusalMessage(client, action.why, 0);
                }
            }
        }
    }
}

// The reasons' names, in SGWhy's order: each refusal's phrase is "Synelo Refused <name>".
char g_sgWhyNames[][] = {
    "", "not_playing", "already_voted", "pending", "too_early", "cooldown", "too_few_players",
    "team_lock", "immune", "busy", "disabled", "self", "unknown_player", "target_in_party",
    "full", "no_invite", "in_party", "no_party"
};

// Tells the player why the rules refused, and how long to wait when it is a matter of time.
// A vote (chat or NativeVotes) passed: scramble at once, or at the next round start.
void VoteScramblePassed()
{
    PrintToChatAll("%t", "Synelo Vote Passed");
    LogAction(-1, -1, "synelo: the players voted to scramble the teams");
    g_scrambleQuiet = true;  // the messages below say when
    g_scrambleByVote = true;
    SL_ForceScramble(NowMs());
    DrainActions();
    g_scrambleQuiet = false;
    // At once (or, passed during a round with sm_synelo_vote_at_round_end, now that it ended:
    // at the next round start, as any scramble). Arena waits for the round start too: its
    // dead stay dead until then.
    if (!((!g_sgVoteAtRoundEnd || g_preRound) && !SL_IsArena() && ApplyScramble(true)))
    {
        PrintToChatAll("%t", "Synelo Scramble Next Round");
        RequestSplits(false);
    }
}

void RefusalMessage(int client, SGWhy why, int wait)
{
    char phrase[64];
    FormatEx(phrase, sizeof(phrase), "Synelo Refused %s", g_sgWhyNames[view_as<int>(why)]);
    if (TranslationPhraseExists(phrase))
    {
        PrintToChat(client, "%t", phrase, wait);
    }
}

// Everyone in the party (and the one who left) hears who is in it now.
void PartyMessage(SGAction action)
{
    int client = ClientById(action.player);
    char members[SG_PARTY_TEXT];
    strcopy(members, sizeof(members), action.party);
    ReplaceString(members, sizeof(members), ",", " ");
    ArrayList told = new ArrayList();
    if (client > 0)
    {
        told.Push(client);
    }
    char ids[SL_MAX_CLIENTS + 1][SL_ID_LEN];
    int n = action.party[0] == '\0' ? 0 : ExplodeString(action.party, ",", ids, sizeof(ids), SL_ID_LEN);
    for (int k = 0; k < n; k++)
    {
        int member = ClientById(ids[k]);
        if (member > 0 && told.FindValue(member) == -1)
        {
            told.Push(member);
        }
    }
    for (int k = 0; k < told.Length; k++)
    {
        int listener = told.Get(k);
        if (action.type == SGAct_PartyJoined)
        {
            PrintToChat(listener, "%t", "Synelo Party Joined", client, n);
        }
        else if (n < 2)
        {
            PrintToChat(listener, "%t", "Synelo Party Dissolved", client);
        }
        else
        {
            PrintToChat(listener, "%t", "Synelo Party Left", client, n);
        }
    }
    delete told;
}

// Those who did not come back after the map change leave (their party, their invites).
public Action Timer_ForgetGone(Handle timer)
{
    char id[SL_ID_LEN];
    for (int i = 0; i < g_sgPlayerCount; i++)
    {
        if (g_sgPlayers[i].present && ClientById(g_sgPlayers[i].id) == 0)
        {
            strcopy(id, sizeof(id), g_sgPlayers[i].id);
            SG_Leave(NowMs(), id);
        }
    }
    DrainCommunity();
    return Plugin_Stop;
}

// --- team changes -------------------------------------------------------------------------

int RequestedSide(const char[] arg)
{
    if (StrEqual(arg, "red", false))
    {
        return SL_A;
    }
    if (StrEqual(arg, "blue", false))
    {
        return SL_B;
    }
    if (StrEqual(arg, "spectate", false) || StrEqual(arg, "spectator", false))
    {
        return SL_NONE;
    }
    return -1;  // "auto" and anything else: the engine picks
}

public Action Listener_JoinTeam(int client, const char[] command, int argc)
{
    if (client <= 0 || !Active() || g_clientId[client][0] == '\0' || SL_IsArena())
    {
        return Plugin_Continue;
    }
    char arg[16];
    GetCmdArg(1, arg, sizeof(arg));
    int side = StrEqual(command, "spectate", false) ? SL_NONE : RequestedSide(arg);
    if (side == -1)
    {
        // "auto": a locked player goes back to their side, whatever the engine would pick;
        // a newcomer to a live round is placed like one who picked a team
        int locked = SG_LockOf(NowMs(), g_clientId[client]);
        int current = ClientSide(client, GetClientTeam(client));
        if (locked != SL_NONE)
        {
            if (current != locked)
            {
                ChangeClientTeam(client, locked == SL_A ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue));
                LogAction(-1, client, "synelo: sent %L back to %s, the team a scramble or move locked them on (team_lock)",
                    client, locked == SL_A ? "RED" : "BLU");
            }
            return Plugin_Handled;
        }
        if (SL_IsTeam(current))
        {
            return Plugin_Continue;
        }
        side = SL_A;
    }
    SGActionType answer = SG_TeamRequest(NowMs(), g_clientId[client], side);
    DrainCommunity();
    return answer == SGAct_TeamAllowed ? Plugin_Continue : Plugin_Handled;
}

// A newcomer to a live round: the service's odd-joiner rule picks the side.
void PlaceJoiner(int client)
{
    char parties[SL_PARTIES_LEN];
    SG_PartiesJson(parties, sizeof(parties), SG_OnTeams);
    char none[1][SL_ID_LEN];
    if (!SL_BuildAutobalanceBody(g_sgText, sizeof(g_sgText), none, 0, none, 0, parties, g_clientId[client])
        || !PostText("autobalance", g_sgText, OnJoinerPlaced, GetClientUserId(client)))
    {
        SeatJoiner(client, SmallerTeam());
    }
}

// The team with fewer players (a coin decides a tie): where a joiner goes without the service.
int SmallerTeam()
{
    int red = GetTeamClientCount(view_as<int>(TFTeam_Red));
    int blue = GetTeamClientCount(view_as<int>(TFTeam_Blue));
    if (red != blue)
    {
        return red < blue ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue);
    }
    return GetRandomInt(0, 1) == 0 ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue);
}

// Seats a placed joiner: the team, the class menu, and the team lock (a placement is a move).
void SeatJoiner(int client, int team)
{
    ChangeClientTeam(client, team);
    ShowVGUIPanel(client, team == view_as<int>(TFTeam_Red) ? "class_red" : "class_blue");
    NoteMoved(client, team == view_as<int>(TFTeam_Red) ? SL_A : SL_B);
    PrintToChat(client, "%t", "Synelo Placed", team == view_as<int>(TFTeam_Red) ? "RED" : "BLU");
}

public void OnJoinerPlaced(HTTPResponse response, any userid, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    int client = GetClientOfUserId(userid);
    if (client <= 0 || !IsClientInGame(client))
    {
        return;
    }
    int team = SmallerTeam();
    if (status == 200)
    {
        JSONObject data = view_as<JSONObject>(response.Data);
        JSONArray moves = view_as<JSONArray>(data.Get("moves"));
        char id[SL_ID_LEN];
        char to[8];
        for (int i = 0; moves != null && i < moves.Length; i++)
        {
            JSONObject move = view_as<JSONObject>(moves.Get(i));
            move.GetString("steam_id", id, sizeof(id));
            move.GetString("to", to, sizeof(to));
            delete move;
            if (StrEqual(id, g_clientId[client]))
            {
                team = StrEqual(to, "A") ? view_as<int>(TFTeam_Red) : view_as<int>(TFTeam_Blue);
                break;
            }
        }
        delete moves;
    }
    else
    {
        LogError("synelo: placing a joiner failed (HTTP %d %s); a random side", status, error);
    }
    SeatJoiner(client, team);
}

// --- player commands ----------------------------------------------------------------------

// The command's per-player limit; the player hears how long to wait when it is refused.
bool CommandAllowed(int client, SGCommand command)
{
    if (client <= 0)
    {
        return true;  // the server console
    }
    if (g_clientId[client][0] == '\0')
    {
        ReplyToCommand(client, "[synelo] %t", "Synelo Not Authorized");
        return false;  // no SteamID yet: nothing to limit by, and nothing to look up
    }
    bool ok = SG_Command(NowMs(), g_clientId[client], command);
    SGAction action;
    while (SG_NextAction(action))
    {
        if (action.type == SGAct_CommandRefused)
        {
            PrintToChat(client, "%t", "Synelo Command Wait", action.wait);
        }
    }
    return ok;
}

public Action Cmd_Rank(int client, int args)
{
    if (!CommandAllowed(client, SGCmd_Rank))
    {
        return Plugin_Handled;
    }
    int target = client;
    if (args >= 1)
    {
        char pattern[64];
        GetCmdArgString(pattern, sizeof(pattern));
        StripQuotes(pattern);
        target = FindTarget(client, pattern, true, false);
        if (target <= 0)
        {
            return Plugin_Handled;  // FindTarget replied why
        }
    }
    if (target <= 0 || g_clientId[target][0] == '\0')
    {
        ReplyToCommand(client, "[synelo] %t", "Synelo Rating Unknown", target);
        return Plugin_Handled;
    }
    DataPack pack = new DataPack();
    pack.WriteCell(client > 0 ? GetClientUserId(client) : 0);
    pack.WriteCell(GetClientUserId(target));
    if (!PostLookup(target, OnRankLookUp, pack))
    {
        delete pack;
        ReplyToCommand(client, "[synelo] %t", "Synelo Service Unreachable");
    }
    return Plugin_Handled;
}

// POST players/lookup for one client, with their name: the answer has the rating, rounds,
// place and the pool's shadow length. False when it could not be sent.
bool PostLookup(int client, HTTPRequestCallback callback, any value)
{
    char name[MAX_NAME_LENGTH];
    if (GetClientName(client, name, sizeof(name)))
    {
        SL_SetName(g_clientId[client], name);
    }
    return SL_BuildLookupBody(g_sgText, sizeof(g_sgText), g_clientId[client])
        && PostText("players/lookup", g_sgText, callback, value);
}

// Reads a lookup answer's first player into the client's cache; false when it has none.
bool ReadLookup(HTTPResponse response, int client)
{
    if (view_as<int>(response.Status) != 200)
    {
        return false;
    }
    JSONObject data = view_as<JSONObject>(response.Data);
    if (data.HasKey("shadow_rounds"))
    {
        g_shadowRounds = data.GetInt("shadow_rounds");
    }
    JSONArray players = view_as<JSONArray>(data.Get("players"));
    if (players == null || players.Length == 0)
    {
        delete players;
        return false;
    }
    JSONObject player = view_as<JSONObject>(players.Get(0));
    StoreRating(client, player);
    g_clientPlace[client] = player.HasKey("place") && !player.IsNull("place")
        ? player.GetInt("place") : 0;
    delete player;
    delete players;
    return true;
}

public void OnRankLookUp(HTTPResponse response, any value, const char[] error)
{
    NoteStatus(view_as<int>(response.Status));
    DataPack pack = view_as<DataPack>(value);
    pack.Reset();
    int askerUserId = pack.ReadCell();
    int asker = GetClientOfUserId(askerUserId);
    int target = GetClientOfUserId(pack.ReadCell());
    delete pack;
    if (askerUserId != 0 && asker <= 0)
    {
        return;  // the player who asked has left
    }
    if (target <= 0 || !ReadLookup(response, target))
    {
        if (asker > 0)
        {
            PrintToChat(asker, "%t", "Synelo Service Unreachable");
        }
        return;
    }
    Api_RatingsLoaded(target);
    char line[256];
    RankLine(asker, target, line, sizeof(line));
    if (asker > 0)
    {
        PrintToChat(asker, "%s", line);
    }
    else
    {
        PrintToServer("%s", line);
    }
}

// "<name>: rating R, place P of the board (N rounds)" or, in the shadow period, "N of T".
void RankLine(int asker, int target, char[] line, int size)
{
    if (!g_clientVisible[target])
    {
        FormatEx(line, size, "%T", "Synelo Rank Shadow", asker, target, g_clientRounds[target],
            g_shadowRounds);
    }
    else if (g_clientPlace[target] > 0)
    {
        FormatEx(line, size, "%T", "Synelo Rank", asker, target, g_clientRating[target],
            g_clientPlace[target], g_clientRounds[target]);
    }
    else
    {
        FormatEx(line, size, "%T", "Synelo Rank Unlisted", asker, target, g_clientRating[target],
            g_clientRounds[target]);
    }
}

public Action Cmd_Top(int client, int args)
{
    if (!CommandAllowed(client, SGCmd_Top) || !g_ripOk)
    {
        return Plugin_Handled;
    }
    char base[256];
    char pool[64];
    char url[512];
    g_cvUrl.GetString(base, sizeof(base));
    g_cvPool.GetString(pool, sizeof(pool));
    FormatEx(url, sizeof(url), "%s/v1/public/pools/%s/leaderboard?limit=10", base, pool);
    NewRequestAt(url).Get(OnTop, client > 0 ? GetClientUserId(client) : 0);
    return Plugin_Handled;
}

public void OnTop(HTTPResponse response, any userid, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    int client = GetClientOfUserId(userid);
    if (userid != 0 && client <= 0)
    {
        return;  // the player who asked has left
    }
    if (status != 200)
    {
        if (client > 0)
        {
            PrintToChat(client, "%t", "Synelo Service Unreachable");
        }
        return;
    }
    JSONObject data = view_as<JSONObject>(response.Data);
    JSONArray players = view_as<JSONArray>(data.Get("players"));
    Menu menu = new Menu(MenuHandler_Top);
    menu.SetTitle("%T", "Synelo Top Title", client);
    char name[MAX_NAME_LENGTH];
    char line[160];
    for (int i = 0; players != null && i < players.Length; i++)
    {
        JSONObject player = view_as<JSONObject>(players.Get(i));
        if (player.IsNull("name") || !player.GetString("name", name, sizeof(name)))
        {
            player.GetString("steam_id", name, sizeof(name));
        }
        int place = player.GetInt("place");
        int rating = player.GetInt("rating");
        FormatEx(line, sizeof(line), "%d. %s  %d", place, name, rating);
        menu.AddItem("", line, ITEMDRAW_DISABLED);
        if (client <= 0)
        {
            PrintToServer("%s", line);
        }
        delete player;
    }
    delete players;
    if (client > 0)
    {
        menu.Display(client, 30);
    }
    else
    {
        delete menu;
    }
}

public int MenuHandler_Top(Menu menu, MenuAction action, int param1, int param2)
{
    if (action == MenuAction_End)
    {
        delete menu;
    }
    return 0;
}

public Action Cmd_Balance(int client, int args)
{
    if (!CommandAllowed(client, SGCmd_Balance))
    {
        return Plugin_Handled;
    }
    bool ok = SL_BuildPredictBody(g_sgText, sizeof(g_sgText));
    if (SL_Count(SL_A) == 0 || SL_Count(SL_B) == 0)
    {
        ReplyToCommand(client, "[synelo] %t", "Synelo Balance Empty");
    }
    else if (!ok || !PostText("predict", g_sgText, OnBalance, client > 0 ? GetClientUserId(client) : 0))
    {
        ReplyToCommand(client, "[synelo] %t", "Synelo Service Unreachable");
    }
    return Plugin_Handled;
}

public void OnBalance(HTTPResponse response, any userid, const char[] error)
{
    int status = view_as<int>(response.Status);
    NoteStatus(status);
    int client = GetClientOfUserId(userid);
    if (userid != 0 && client <= 0)
    {
        return;  // the player who asked has left
    }
    if (status != 200)
    {
        if (client > 0)
        {
            PrintToChat(client, "%t", "Synelo Service Unreachable");
        }
        return;
    }
    JSONObject data = view_as<JSONObject>(response.Data);
    int red = RoundToNearest(data.GetFloat("p_a") * 100.0);
    if (client > 0)
    {
        PrintToChat(client, "%t", "Synelo Balance", red, 100 - red);
    }
    else
    {
        PrintToServer("[synelo] RED %d %% - BLU %d %%", red, 100 - red);
    }
}

public Action Cmd_Party(int client, int args)
{
    if (client <= 0 || !CommandAllowed(client, SGCmd_Party))
    {
        return Plugin_Handled;
    }
    char arg[64];
    GetCmdArgString(arg, sizeof(arg));
    StripQuotes(arg);
    TrimString(arg);
    if (StrEqual(arg, "accept", false))
    {
        SG_PartyAccept(NowMs(), g_clientId[client]);
    }
    else if (StrEqual(arg, "leave", false))
    {
        SG_PartyLeave(NowMs(), g_clientId[client]);
    }
    else if (arg[0] == '\0')
    {
        ReplyToCommand(client, "[synelo] %t", "Synelo Party Usage");
        return Plugin_Handled;
    }
    else
    {
        int target = FindTarget(client, arg, true, false);
        if (target <= 0)
        {
            return Plugin_Handled;
        }
        SG_PartyInvite(NowMs(), g_clientId[client], g_clientId[target]);
    }
    DrainCommunity();
    return Plugin_Handled;
}

public Action Cmd_VoteScramble(int client, int args)
{
    if (client <= 0 || !Active() || !CommandAllowed(client, SGCmd_VoteScramble))
    {
        return Plugin_Handled;
    }
    if (NV_Available())
    {
        NV_Request(client);  // TF2's vote screen (synelo/votes.sp)
        return Plugin_Handled;
    }
    SG_Vote(NowMs(), g_clientId[client]);
    DrainCommunity();
    return Plugin_Handled;
}
