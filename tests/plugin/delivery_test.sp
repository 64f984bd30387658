/**
 * The report buffer (include/synelo/delivery.inc: the statuses, the retry schedule, the
 * Retry-After parser, drops, the probe and the set-aside) behind public functions, for pysmx's VM:
 * tests/plugin/test_backpressure.py calls them. A report handed out to be sent comes back to
 * Python through Py_Action (type 0, text = the body), the native tests/plugin/harness.py's
 * LogicVM binds. No engine calls.
 */

#pragma semicolon 1
#pragma newdecls required

#include <synelo/logic>
#include <synelo/delivery>

native void Py_Action(int type, int arg, int t, int from, int to, int reason, const char[] text);

char g_text[SL_REPORT_LEN];

public void T_Reset() { SD_Reset(); }
public bool T_Add(const char[] body) { return SD_Add(body); }
public int T_Count() { return SD_Count(); }
public bool T_InFlight() { return SD_InFlight(); }
public int T_Dropped() { return g_sdDropped; }
public int T_Rejected() { return g_sdRejected; }
public int T_TakeDropped() { return SD_TakeDropped(); }
public int T_Result(int status) { return view_as<int>(SD_Result(status)); }
public int T_ResultAt(int status, int retryAfter, int nowMs) { return view_as<int>(SD_ResultAt(status, retryAfter, nowMs)); }
public bool T_Due(int nowMs) { return SD_Due(nowMs); }
public int T_RetryAt() { return SD_RetryAt(); }
public int T_RetryDelayMs() { return SD_RetryDelayMs(); }
public int T_RetryBy() { return view_as<int>(SD_RetryBy()); }
public int T_Failures() { return SD_Failures(); }
public int T_BackoffMs(int failures) { return SD_BackoffMs(failures); }
public int T_ParseRetryAfter(const char[] value) { return SD_ParseRetryAfter(value); }
public int T_Classify(int status) { return view_as<int>(SD_Classify(status)); }
public bool T_Probing() { return SD_Probing(); }
public int T_Streak() { return SD_Streak(); }
public int T_SetAside() { return SD_SetAsideCount(); }

// SD_TakeLost's report through Py_Action (type 1, arg = its kind, t = the status, text =
// the body); returns the kind (0: none lost).
public int T_TakeLost()
{
    int status;
    SDLost kind = SD_TakeLost(g_text, sizeof(g_text), status);
    if (kind != SDLost_None)
    {
        Py_Action(1, view_as<int>(kind), status, 0, 0, 0, g_text);
    }
    return view_as<int>(kind);
}

// SD_RoundId's answer through Py_Action (type 2, text = the id).
public void T_RoundId(const char[] body, int size)
{
    char id[SD_ROUND_ID_LEN];
    SD_RoundId(body, id, size < sizeof(id) ? size : sizeof(id));
    Py_Action(2, 0, 0, 0, 0, 0, id);
}

// The Retry-After header as the host reads it: parsed, then the outcome settled.
public int T_ResultHeader(int status, const char[] retryAfter, int nowMs)
{
    return view_as<int>(SD_ResultAt(status, SD_ParseRetryAfter(retryAfter), nowMs));
}

// SD_NextDue's report through Py_Action; false when none may go at nowMs.
public bool T_NextDue(int nowMs)
{
    if (!SD_NextDue(nowMs, g_text, sizeof(g_text)))
    {
        return false;
    }
    Py_Action(0, 0, nowMs, 0, 0, 0, g_text);
    return true;
}

// The i-th waiting report through Py_Action; false past the end.
public bool T_Peek(int i)
{
    if (!SD_Peek(i, g_text, sizeof(g_text)))
    {
        return false;
    }
    Py_Action(0, i, 0, 0, 0, 0, g_text);
    return true;
}

// The constants, so the tests read them instead of restating them.
public int T_Const(int which)
{
    switch (which)
    {
        case 0: { return SD_NO_RETRY_AFTER; }
        case 1: { return SD_RETRY_AFTER_MIN; }
        case 2: { return SD_RETRY_AFTER_MAX; }
        case 3: { return SD_BACKOFF_FIRST_MS; }
        case 4: { return SD_BACKOFF_MAX_MS; }
        case 5: { return SD_SECONDS_SATURATED; }
        case 6: { return SD_BUFFER; }
        case 7: { return SD_SLOTS; }
        case 8: { return view_as<int>(SDRetry_None); }
        case 9: { return view_as<int>(SDRetry_RetryAfter); }
        case 10: { return view_as<int>(SDRetry_Backoff); }
        case 11: { return SD_SUSPECT_AFTER; }
    }
    return -2;
}
