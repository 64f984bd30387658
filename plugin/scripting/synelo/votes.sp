/**
 * The vote scramble on TF2's own vote screen, through the NativeVotes plugin when it runs
 * (sm_synelo_nativevotes 1). A player's request is checked as a chat vote is (playing, the
 * map-start delay, the cooldown, the vote's minimum players); then everyone on a team gets a
 * yes/no ScrambleNow vote for 20 s. It passes when the yes votes reach the chat vote's
 * threshold (sm_synelo_vote_ratio of the players on a team), and then scrambles as a passed
 * chat vote does. Without NativeVotes, the chat vote counts !synelo_votescramble.
 */

const int SYN_NV_SECONDS = 20;  // how long the vote screen stays up

ConVar g_cvNativeVotes;
float g_nvFailedAt = -1.0e6;   // engine time of the last failed NativeVotes vote

bool NV_Available()
{
    return g_cvNativeVotes.BoolValue && LibraryExists("nativevotes")
        && GetFeatureStatus(FeatureType_Native, "NativeVotes_Create") == FeatureStatus_Available
        && NativeVotes_IsVoteTypeSupported(SynNV_TypeScrambleNow);
}

// A player asks for a scramble while NativeVotes runs: start the vote, or say why not.
void NV_Request(int client)
{
    SG_Advance(NowMs());
    int wait;
    SGWhy why = SG_VoteRefusal(SG_Find(g_clientId[client]), wait);
    if (why == SGWhy_AlreadyVoted)
    {
        why = SGWhy_None;  // chat votes are not counted here: the vote screen is
    }
    float since = GetEngineTime() - g_nvFailedAt;
    if (why == SGWhy_None && since < g_cvVoteCooldown.FloatValue)
    {
        why = SGWhy_Cooldown;
        wait = RoundToCeil(g_cvVoteCooldown.FloatValue - since);
    }
    if (why != SGWhy_None)
    {
        RefusalMessage(client, why, wait);
        return;
    }
    if (NativeVotes_IsVoteInProgress())
    {
        PrintToChat(client, "%t", "Synelo Vote Busy");
        return;
    }
    int clients[SL_MAX_CLIENTS];
    int count = 0;
    for (int other = 1; other <= MaxClients; other++)
    {
        if (IsClientInGame(other) && !IsFakeClient(other)
            && SL_IsTeam(ClientSide(other, GetClientTeam(other))))
        {
            clients[count++] = other;
        }
    }
    Handle vote = NativeVotes_Create(NV_Handler, SynNV_TypeScrambleNow);
    if (vote == null)
    {
        return;
    }
    if (!NativeVotes_Display(vote, clients, count, SYN_NV_SECONDS))
    {
        NativeVotes_Close(vote);
        return;
    }
    LogAction(client, -1, "\"%L\" started a scramble vote (NativeVotes)", client);
}

public int NV_Handler(Handle vote, MenuAction action, int param1, int param2)
{
    switch (action)
    {
        case MenuAction_End:
        {
            NativeVotes_Close(vote);
        }
        case MenuAction_VoteCancel:
        {
            NativeVotes_DisplayFail(vote, SynNV_FailGeneric);
            g_nvFailedAt = GetEngineTime();
        }
        case MenuAction_VoteEnd:
        {
            int winning = param2 & 0xFFFF;  // NativeVotes_GetInfo
            int total = param2 >> 16;
            int yes = param1 == SynNV_VoteYes ? winning : total - winning;
            int needed = SG_VotesNeeded(g_cvVoteRatio.IntValue, SG_PlayingCount());
            if (yes < needed)
            {
                NativeVotes_DisplayFail(vote, SynNV_FailNotEnoughVotes);
                g_nvFailedAt = GetEngineTime();
                LogAction(-1, -1, "synelo: the scramble vote failed: %d yes of %d needed", yes, needed);
                return 0;
            }
            NativeVotes_DisplayPass(vote);
            LogAction(-1, -1, "synelo: the scramble vote passed: %d yes of %d needed", yes, needed);
            if (g_sgVoteAtRoundEnd && g_sgLive)
            {
                g_sgPending = true;  // as SG_Vote does: at the round end
                PrintToChatAll("%t", "Synelo Vote Passed Round End");
            }
            else
            {
                VoteScramblePassed();
            }
        }
    }
    return 0;
}
