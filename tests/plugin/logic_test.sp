/**
 * The plugin's decision logic (include/synelo/{logic,delivery,splits}.inc) behind public
 * functions, for pysmx's VM: tests/plugin/test_plugin_vm.py calls them and reads the actions
 * back through Py_Action, a native bound from Python. No engine calls, no other natives than
 * the VM's own string natives.
 */

#pragma semicolon 1
#pragma newdecls required

#include <synelo/logic>
#include <synelo/delivery>
#include <synelo/splits>
#include <synelo/community>

// type, arg, t (ms), from, to, reason, text (a body, or the moved player's id)
native void Py_Action(int type, int arg, int t, int from, int to, int reason, const char[] text);
// each eligible player's place in the split (SL_A, SL_B, SL_WAITING)
native void Py_Seat(const char[] id, int side);

char g_text[SL_REPORT_LEN];

public void T_Reset(int mode, int streak, int fullRounds, int delayMs, int r0)
{
    SL_Reset(view_as<SLMode>(mode));
    SL_Configure(streak, fullRounds, delayMs, r0);
    SL_SetServer("srv1", "koth_test", "srv1-5f00");
    SD_Reset();
    SC_Clear();
}

public void T_Join(int t, const char[] id, int side, int rating, bool hasRating)
{
    if (hasRating)
    {
        SL_SetRating(id, rating);
    }
    SL_Join(t, id, side);
}

public void T_Scrambles(int minPlayers, int cooldownMs, int triggers, int roundMinMs, int roundMaxMs)
{
    SL_ConfigureScrambles(minPlayers, cooldownMs, triggers, roundMinMs, roundMaxMs);
}

public int T_ModeFromName(const char[] name)
{
    SLMode mode;
    return SL_ModeFromName(name, mode) ? view_as<int>(mode) : -1;
}

public void T_SectorsEdge(bool enabled, int delayMs, int gap2) { SL_ConfigureSectorsEdge(enabled, delayMs, gap2); }
public void T_PubPower(const char[] id, int pubPower, bool party) { SL_SetPubPower(id, pubPower, party); }
public void T_Points(int t, const char[] id, int points) { SL_Points(t, id, points); }
public void T_Death(int t, const char[] id) { SL_Death(t, id); }
public void T_Leave(int t, const char[] id) { SL_Leave(t, id); }
public void T_TeamChange(int t, const char[] id, int side) { SL_TeamChange(t, id, side); }
public void T_Rating(int t, const char[] id, int rating) { SL_Advance(t); SL_SetRating(id, rating); }
public void T_WaitingEnded(int t) { SL_WaitingEnded(t); }
public void T_RoundStart(int t, int attackers) { SL_RoundStart(t, attackers); }
public void T_Damage(int t, const char[] attacker, const char[] victim) { SL_Damage(t, attacker, victim); }
public void T_Heal(int t, const char[] healer) { SL_Heal(t, healer); }
public void T_Capture(int t, int side) { SL_Capture(t, side); }
public void T_RoundEnd(int t, int winner, bool fullRound) { SL_RoundEnd(t, winner, fullRound); }
public void T_Scores(int a, int b) { SL_SetScores(a, b); }
public void T_Tick(int t) { SL_Tick(t); }
public void T_ForceScramble(int t) { SL_ForceScramble(t); }
public bool T_ApplyMove(int t, const char[] id, int to) { return SL_ApplyMove(t, id, to, SL_MOVE_F11); }
public int T_Due() { return SL_AutobalanceDue(); }
public bool T_ScramblePending() { return SL_ScramblePending(); }
public void T_ScrambleDone() { SL_ScrambleDone(); }

// Hands every queued action to Python; returns how many.
public int T_Drain()
{
    int n = 0;
    SLAction action;
    char none[1];
    while (SL_NextAction(action))
    {
        n++;
        switch (action.type)
        {
            case SL_ACT_REPORT:
            {
                Py_Action(view_as<int>(action.type), action.arg, action.t, 0, 0, 0, g_slReport);
            }
            case SL_ACT_REQUEST_SPLITS:
            {
                SL_BuildSplitsBody(g_text, sizeof(g_text));
                Py_Action(view_as<int>(action.type), action.arg, action.t, 0, 0, 0, g_text);
            }
            case SL_ACT_AUTOBALANCE:
            {
                char locked[1][SL_ID_LEN];
                SL_BuildAutobalanceBody(g_text, sizeof(g_text), locked, 0, locked, 0);
                Py_Action(view_as<int>(action.type), action.arg, action.t, 0, 0, 0, g_text);
            }
            case SL_ACT_MOVE:
            {
                Py_Action(view_as<int>(action.type), action.arg, action.t, action.from, action.to, view_as<int>(action.reason),
                    g_slPlayers[action.arg].id);
            }
            default:
            {
                Py_Action(view_as<int>(action.type), action.arg, action.t, 0, 0, 0, none);
            }
        }
    }
    return n;
}

// --- the report buffer --------------------------------------------------------------------

public bool T_SDAdd(const char[] body) { return SD_Add(body); }
public int T_SDCount() { return SD_Count(); }
public int T_SDDropped() { return g_sdDropped; }
public int T_SDRejected() { return g_sdRejected; }
public int T_SDResult(int status) { return view_as<int>(SD_Result(status)); }

// The next report to send through Py_Action (type 0, text = body); false when none.
public bool T_SDNext()
{
    if (!SD_Next(g_text, sizeof(g_text)))
    {
        return false;
    }
    Py_Action(0, 0, 0, 0, 0, 0, g_text);
    return true;
}

// --- the split cache ----------------------------------------------------------------------

public void T_SCClear() { SC_Clear(); }
public int T_SCBegin(int k) { return SC_Begin(k); }
public bool T_SCAdd(int s, int side, const char[] id) { return SC_Add(s, side, id); }

// The largest usable split's k (-1: none), seating every eligible player through Py_Seat.
public int T_SCChoose()
{
    return SeatSplit(SC_Choose());
}

// The pending scramble's split as T_SCChoose, -1 when it stays pending (or none is).
public int T_SCTakeScramble()
{
    return SeatSplit(SC_TakeScramble());
}

int SeatSplit(int s)
{
    if (s == -1)
    {
        return -1;
    }
    bool swap = SC_Swap(s);
    for (int i = 0; i < g_slPlayerCount; i++)
    {
        if (SL_IsEligible(i))
        {
            Py_Seat(g_slPlayers[i].id, SC_SideInNamed(s, g_slPlayers[i].id, swap));
        }
    }
    return g_scK[s];
}

public void T_SCFilled(int t) { SC_Filled(t); }

// The host applies the pending scramble as synelo.sp does (SC_TakeScramble, SC_Swap, then
// SC_SideInNamed for every eligible player), seating everyone through Py_Seat and then in the
// logic (as the engine's team changes would). -1 when it stays pending, else 1 for the
// fallback split and 0 for a cached one.
public int T_ApplyScramble(int t, bool fallback)
{
    SL_Advance(t);
    int s = SC_TakeScramble(fallback);
    if (s == -1)
    {
        return -1;
    }
    bool swap = SC_Swap(s);
    int sides[SL_MAX_PLAYERS];
    for (int i = 0; i < g_slPlayerCount; i++)
    {
        sides[i] = SL_IsEligible(i) ? SC_SideInNamed(s, g_slPlayers[i].id, swap) : SL_NONE;
    }
    for (int i = 0; i < g_slPlayerCount; i++)
    {
        if (sides[i] == SL_NONE)
        {
            continue;
        }
        Py_Seat(g_slPlayers[i].id, sides[i]);
        if (g_slJoiner == i && g_slPlayers[i].side != sides[i])
        {
            g_slJoiner = -1;
        }
        SL_Seat(i, sides[i]);
    }
    SL_RosterChanged();
    return SC_IsFallback(s) ? 1 : 0;
}

// The sizes SC_PlacedCount reports for the split a scramble would take now (a, b, waiting
// through Py_Action's arg, from and to), without taking it.
public void T_PlacedCounts()
{
    int s = SC_Choose();
    if (s == -1)
    {
        return;
    }
    bool swap = SC_Swap(s);
    Py_Action(0, SC_PlacedCount(s, SL_A, swap), 0, SC_PlacedCount(s, SL_B, swap),
        SC_PlacedCount(s, SL_WAITING, swap), 0, "");
}

// The report of the round that just ended, as T_Drain hands it (for the size tests).
public void T_Report() { Py_Action(1, 0, 0, 0, 0, 0, g_slReport); }
public void T_SplitsBody()
{
    SL_BuildSplitsBody(g_text, sizeof(g_text));
    Py_Action(0, 0, 0, 0, 0, 0, g_text);
}
public int T_SCUpdated() { return g_scUpdated; }

// --- the community rules (include/synelo/community.inc) -----------------------------------

public void T_SGReset(int percent, int minPlayers, int cooldownMs, int mapDelayMs, bool atRoundEnd,
    int teamLockMs, bool spectate, int moveCooldownMs, bool parties, int partySize,
    int commandIntervalMs)
{
    SG_Reset();
    SG_ConfigureVotes(percent, minPlayers, cooldownMs, mapDelayMs, atRoundEnd);
    SG_ConfigureGuards(teamLockMs, spectate, moveCooldownMs, parties, partySize, commandIntervalMs);
}

public void T_SGMapStart(int t) { SG_MapStart(t); }
public void T_SGJoin(int t, const char[] id, int side, bool immune) { SG_Join(t, id, side, immune); }
public void T_SGLeave(int t, const char[] id) { SG_Leave(t, id); }
public void T_SGTeamChange(int t, const char[] id, int side) { SG_TeamChange(t, id, side); }
public void T_SGRoundStart(int t) { SG_RoundStart(t); }
public void T_SGRoundEnd(int t) { SG_RoundEnd(t); }
public void T_SGVote(int t, const char[] id) { SG_Vote(t, id); }
public void T_SGScrambled(int t) { SG_Scrambled(t); }
public void T_SGMoved(int t, const char[] id, int side) { SG_Moved(t, id, side); }
public void T_SGTeamRequest(int t, const char[] id, int side) { SG_TeamRequest(t, id, side); }
public void T_SGImmune(int t, const char[] id, bool immune) { SG_SetImmune(t, id, immune); }
public void T_SGMoveRequest(int t, const char[] id, bool busy) { SG_MoveRequest(t, id, busy); }
public void T_SGCommand(int t, const char[] id, int command) { SG_Command(t, id, view_as<SGCommand>(command)); }
public void T_SGPartyInvite(int t, const char[] id, const char[] target) { SG_PartyInvite(t, id, target); }
public void T_SGPartyAccept(int t, const char[] id) { SG_PartyAccept(t, id); }
public void T_SGPartyLeave(int t, const char[] id) { SG_PartyLeave(t, id); }
public void T_SGAdvance(int t) { SG_Advance(t); }

// Hands every queued community action to Python: Py_Action(type, arg, t, wait, side, why,
// text), text "player|target|party" (party: ids, comma separated); then arg2 through a
// second Py_Action of type -1 (arg: arg2).
public int T_SGDrain()
{
    int n = 0;
    SGAction action;
    char text[SL_ID_LEN * 2 + SG_PARTY_TEXT + 4];
    while (SG_NextAction(action))
    {
        n++;
        int len = 0;
        text[0] = '\0';
        SJ_Raw(text, sizeof(text), len, action.player);
        SJ_Raw(text, sizeof(text), len, "|");
        SJ_Raw(text, sizeof(text), len, action.target);
        SJ_Raw(text, sizeof(text), len, "|");
        SJ_Raw(text, sizeof(text), len, action.party);
        Py_Action(view_as<int>(action.type), action.arg, action.t, action.wait, action.side,
            view_as<int>(action.why), text);
        Py_Action(-1, action.arg2, action.t, 0, 0, 0, "");
    }
    return n;
}

// The parties of a /splits body (where 1) or an /autobalance body (where 2), or all (0).
public void T_SGParties(int where)
{
    SG_PartiesJson(g_text, sizeof(g_text), view_as<SGWhere>(where));
    Py_Action(0, 0, 0, 0, 0, 0, g_text);
}

public void T_SetName(const char[] id, const char[] name) { SL_SetName(id, name); }

// The bodies synelo.sp sends with the community rules: /splits with the parties of the
// eligible players, /autobalance with those on a team and a joiner ("" for none).
public void T_SplitsBodyWithParties()
{
    char parties[SL_REPORT_LEN / 2];
    SG_PartiesJson(parties, sizeof(parties), SG_Eligible);
    SL_BuildSplitsBody(g_text, sizeof(g_text), parties);
    Py_Action(0, 0, 0, 0, 0, 0, g_text);
}

public void T_AutobalanceBodyWithParties(const char[] joiner)
{
    char parties[SL_REPORT_LEN / 2];
    SG_PartiesJson(parties, sizeof(parties), SG_OnTeams);
    char none[1][SL_ID_LEN];
    SL_BuildAutobalanceBody(g_text, sizeof(g_text), none, 0, none, 0, parties, joiner);
    Py_Action(0, 0, 0, 0, 0, 0, g_text);
}

public void T_SGPartiesOff() { g_sgParties = false; }
public void T_LookupBody(const char[] id) { SL_BuildLookupBody(g_text, sizeof(g_text), id); Py_Action(0, 0, 0, 0, 0, 0, g_text); }
public void T_PredictBody() { SL_BuildPredictBody(g_text, sizeof(g_text)); Py_Action(0, 0, 0, 0, 0, 0, g_text); }
