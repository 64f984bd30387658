/**
 * The margin of the round that just ended, read from the game's own entities as
 * teamplay_round_win fires: each team's score in its mode's unit (plugin/README.md, "Scores").
 * RED is the report's side A and BLU side B, as everywhere in the plugin; the logic sends them
 * only when they agree with the winner (SL_ScoresAgree), and never with a draw.
 *
 * Netprops and datamaps (Valve's source-sdk-2013, TF2's code):
 *  - tf_team (CTFTeam): m_iTeamNum, m_nFlagCaptures: the captures of the round, which
 *    CCaptureFlag::Capture counts while tf_flag_caps_per_round is above 0, and PASS Time's
 *    goals (CTFPasstimeLogic counts each point of a goal there);
 *  - tf_objective_resource (CBaseTeamObjectiveResource): m_iNumControlPoints, and per point
 *    m_iOwner and m_bInMiniRound (the point belongs to the stage in play);
 *    m_iTimerToShowInHUD, the entity index of the round timer in the HUD;
 *  - team_round_timer (CTeamRoundTimer): m_bTimerPaused, m_flTimeRemaining (while paused),
 *    m_flTimerEndTime (while running), m_nTimerLength (SetTime sets it, time added grows it);
 *  - the game rules' m_hRedKothTimer and m_hBlueKothTimer: each KOTH team's clock;
 *  - team_train_watcher (CTeamTrainWatcher): m_iTeamNum, m_flTotalProgress (0..1 along its
 *    track), m_bDisabled (datamap);
 *  - tf_logic_player_destruction and tf_logic_robot_destruction
 *    (CTFRobotDestructionLogic): m_nRedScore, m_nBlueScore.
 */

const int SYN_PERCENT = 100;  // attack/defend, payload, payload race: a stage's shares, in percent

// RED's and BLU's scores of the round ending now; false when the mode keeps none (Special
// Delivery: one delivery ends the round; MvM reports nothing) or the entities are missing.
bool RoundScores(int &red, int &blu)
{
    red = 0;
    blu = 0;
    switch (g_slMode)
    {
        case SL_MODE_CTF:
        {
            // With tf_flag_caps_per_round 0, captures go to the team score (m_iScore) with
            // the map's earlier rounds, and no round count is kept.
            ConVar caps = FindConVar("tf_flag_caps_per_round");
            return (caps == null || caps.IntValue > 0) && TeamProps("m_nFlagCaptures", red, blu);
        }
        case SL_MODE_PASS:
        {
            return TeamProps("m_nFlagCaptures", red, blu);
        }
        case SL_MODE_CP:
        {
            return PointsHeld(red, blu);
        }
        case SL_MODE_KOTH:
        {
            return KothHeld(red, blu);
        }
        case SL_MODE_ARENA:
        {
            return Survivors(red, blu);
        }
        case SL_MODE_ATTACK_DEFEND, SL_MODE_PAYLOAD:
        {
            return StageRace(red, blu);
        }
        case SL_MODE_PAYLOAD_RACE:
        {
            return CartsRace(red, blu);
        }
        case SL_MODE_PD:
        {
            return LogicScores("tf_logic_player_destruction", red, blu);
        }
        case SL_MODE_RD:
        {
            return LogicScores("tf_logic_robot_destruction", red, blu);
        }
    }
    return false;
}

// An integer netprop of RED's and of BLU's tf_team entity.
bool TeamProps(const char[] prop, int &red, int &blu)
{
    red = -1;
    blu = -1;
    int team = -1;
    while ((team = FindEntityByClassname(team, "tf_team")) != -1)
    {
        int number = GetEntProp(team, Prop_Send, "m_iTeamNum");
        if (number == view_as<int>(TFTeam_Red))
        {
            red = GetEntProp(team, Prop_Send, prop);
        }
        else if (number == view_as<int>(TFTeam_Blue))
        {
            blu = GetEntProp(team, Prop_Send, prop);
        }
    }
    return red >= 0 && blu >= 0;
}

// The control points of the stage in play (all of them on a map without stages) that each
// team owns, and how many there are.
bool PointsOwned(int &red, int &blu, int &points)
{
    red = 0;
    blu = 0;
    points = 0;
    int resource = FindEntityByClassname(-1, "tf_objective_resource");
    if (resource == -1)
    {
        return false;
    }
    int count = GetEntProp(resource, Prop_Send, "m_iNumControlPoints");
    for (int i = 0; i < count; i++)
    {
        if (!GetEntProp(resource, Prop_Send, "m_bInMiniRound", _, i))
        {
            continue;
        }
        points++;
        int owner = GetEntProp(resource, Prop_Send, "m_iOwner", _, i);
        red += owner == view_as<int>(TFTeam_Red) ? 1 : 0;
        blu += owner == view_as<int>(TFTeam_Blue) ? 1 : 0;
    }
    return points > 0;
}

// 5CP and symmetric control points: the points each team holds at the end.
bool PointsHeld(int &red, int &blu)
{
    int points;
    return PointsOwned(red, blu, points);
}

// A round timer's seconds left, at least 0 (CTeamRoundTimer::GetTimeRemaining: the time it
// holds while paused, else the time to its end).
float TimerLeft(int timer)
{
    float left = GetEntProp(timer, Prop_Send, "m_bTimerPaused")
        ? GetEntPropFloat(timer, Prop_Send, "m_flTimeRemaining")
        : GetEntPropFloat(timer, Prop_Send, "m_flTimerEndTime") - GetGameTime();
    return left > 0.0 ? left : 0.0;
}

// The seconds a timer has run down: its length (time added included) less the time left.
int TimerUsed(int timer)
{
    int used = RoundToNearest(float(GetEntProp(timer, Prop_Send, "m_nTimerLength")) - TimerLeft(timer));
    return used > 0 ? used : 0;
}

// KOTH: the seconds each team held the point, its clock's length less the time left on it.
// The winner's clock ran out (its whole length); the loser's shortfall, the margin, is the
// time left on its clock.
bool KothHeld(int &red, int &blu)
{
    int redTimer = GameRules_GetPropEnt("m_hRedKothTimer");
    int bluTimer = GameRules_GetPropEnt("m_hBlueKothTimer");
    if (redTimer <= 0 || bluTimer <= 0)
    {
        return false;
    }
    red = TimerUsed(redTimer);
    blu = TimerUsed(bluTimer);
    return true;
}

// Arena: the players alive on each team at the end.
bool Survivors(int &red, int &blu)
{
    for (int client = 1; client <= MaxClients; client++)
    {
        if (IsClientInGame(client) && IsPlayerAlive(client))
        {
            int team = GetClientTeam(client);
            red += team == view_as<int>(TFTeam_Red) ? 1 : 0;
            blu += team == view_as<int>(TFTeam_Blue) ? 1 : 0;
        }
    }
    return true;
}

// The stage's round timer: the one the objective resource shows in the HUD, else the first
// enabled timer shown in the HUD; -1 when none.
int StageTimer()
{
    int resource = FindEntityByClassname(-1, "tf_objective_resource");
    int shown = resource != -1 ? GetEntProp(resource, Prop_Send, "m_iTimerToShowInHUD") : 0;
    int fallback = -1;
    int timer = -1;
    while ((timer = FindEntityByClassname(timer, "team_round_timer")) != -1)
    {
        if (timer == shown)
        {
            return timer;
        }
        if (fallback == -1 && !GetEntProp(timer, Prop_Send, "m_bIsDisabled")
            && GetEntProp(timer, Prop_Send, "m_bShowInHUD"))
        {
            fallback = timer;
        }
    }
    return fallback;
}

// The share (0..1) of its track a team's enabled cart watcher has covered; false without one.
bool CartProgress(int team, float &progress)
{
    int watcher = -1;
    while ((watcher = FindEntityByClassname(watcher, "team_train_watcher")) != -1)
    {
        if (GetEntProp(watcher, Prop_Send, "m_iTeamNum") == team
            && !(HasEntProp(watcher, Prop_Data, "m_bDisabled") && GetEntProp(watcher, Prop_Data, "m_bDisabled")))
        {
            progress = GetEntPropFloat(watcher, Prop_Send, "m_flTotalProgress");
            return true;
        }
    }
    return false;
}

// A share as whole percent, rounded down: a team reaches 100 only by finishing.
int Percent(float share)
{
    int percent = RoundToFloor(share * float(SYN_PERCENT));
    return percent < 0 ? 0 : (percent > SYN_PERCENT ? SYN_PERCENT : percent);
}

// Attack/defend and payload, per stage: the attackers (BLU) race to the end of the stage, the
// defenders (RED) race the clock. BLU's score is the share of the stage taken (its points
// owned, or the cart's progress); RED's the share of the stage's clock used. A capture of the
// last point scores 100 against the clock used, a margin of the share of the clock left; a
// defence to the end scores 100 against the share taken, a margin of the share left to take.
bool StageRace(int &red, int &blu)
{
    int timer = StageTimer();
    int length = timer != -1 ? GetEntProp(timer, Prop_Send, "m_nTimerLength") : 0;
    if (length <= 0)
    {
        return false;
    }
    float taken;
    if (g_slMode == SL_MODE_PAYLOAD)
    {
        if (!CartProgress(view_as<int>(TFTeam_Blue), taken))
        {
            return false;
        }
    }
    else
    {
        int points;
        int redPoints;
        int bluPoints;
        if (!PointsOwned(redPoints, bluPoints, points))
        {
            return false;
        }
        taken = float(bluPoints) / float(points);
    }
    red = Percent((float(length) - TimerLeft(timer)) / float(length));
    blu = Percent(taken);
    return true;
}

// Payload race: the share of its track each team's cart covered (the winner's reached the end).
bool CartsRace(int &red, int &blu)
{
    float redShare;
    float bluShare;
    if (!CartProgress(view_as<int>(TFTeam_Red), redShare) || !CartProgress(view_as<int>(TFTeam_Blue), bluShare))
    {
        return false;
    }
    red = Percent(redShare);
    blu = Percent(bluShare);
    return true;
}

// Player and robot destruction: the points each team scored, as the mode's logic keeps them.
bool LogicScores(const char[] classname, int &red, int &blu)
{
    int logic = FindEntityByClassname(-1, classname);
    if (logic == -1)
    {
        return false;
    }
    red = GetEntProp(logic, Prop_Send, "m_nRedScore");
    blu = GetEntProp(logic, Prop_Send, "m_nBlueScore");
    return true;
}
