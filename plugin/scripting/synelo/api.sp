/**
 * What other plugins and admins get: the natives and forwards of include/synelo.inc, and a
 * "synelo" category in the admin menu (scramble, status, a player's rating).
 */

GlobalForward g_fwdRatingsLoaded;
GlobalForward g_fwdScramble;
GlobalForward g_fwdRoundRated;
TopMenu g_adminMenu;

// From AskPluginLoad2: natives must exist before other plugins load.
void Api_CreateNatives()
{
    CreateNative("SynElo_GetRating", Native_GetRating);
    CreateNative("SynElo_IsVisible", Native_IsVisible);
    CreateNative("SynElo_RequestScramble", Native_RequestScramble);
}

void Api_CreateForwards()
{
    g_fwdRatingsLoaded = new GlobalForward("SynElo_OnRatingsLoaded", ET_Ignore, Param_Cell);
    g_fwdScramble = new GlobalForward("SynElo_OnScramble", ET_Ignore);
    g_fwdRoundRated = new GlobalForward("SynElo_OnRoundRated", ET_Ignore, Param_Cell);
}

int NativeClient()
{
    int client = GetNativeCell(1);
    if (client < 1 || client > MaxClients || !IsClientConnected(client))
    {
        ThrowNativeError(SP_ERROR_NATIVE, "Invalid client index %d", client);
    }
    return client;
}

public any Native_GetRating(Handle plugin, int numParams)
{
    int client = NativeClient();
    return g_clientKnown[client] ? g_clientRating[client] : -1;
}

public any Native_IsVisible(Handle plugin, int numParams)
{
    int client = NativeClient();
    return g_clientKnown[client] && g_clientVisible[client];
}

public any Native_RequestScramble(Handle plugin, int numParams)
{
    if (!Active())
    {
        return false;
    }
    char caller[PLATFORM_MAX_PATH];
    GetPluginFilename(plugin, caller, sizeof(caller));
    LogAction(-1, -1, "synelo: the plugin %s asked for a synelo scramble at the next round start", caller);
    SL_ForceScramble(NowMs());
    DrainActions();
    return true;
}

void Api_RatingsLoaded(int client)
{
    Call_StartForward(g_fwdRatingsLoaded);
    Call_PushCell(client);
    Call_Finish();
}

void Api_Scrambled()
{
    Call_StartForward(g_fwdScramble);
    Call_Finish();
}

// winner: TF2's team number (2 RED, 3 BLU), 0 for a draw.
void Api_RoundRated(int winner)
{
    Call_StartForward(g_fwdRoundRated);
    Call_PushCell(winner);
    Call_Finish();
}

// --- the admin menu -----------------------------------------------------------------------

// Loaded after the admin menu (a late load, a reload): its ready call has passed already.
public void OnAllPluginsLoaded()
{
    TopMenu topmenu;
    if (LibraryExists("adminmenu") && ((topmenu = GetAdminTopMenu()) != null))
    {
        OnAdminMenuReady(topmenu);
    }
}

public void OnAdminMenuReady(Handle aTopMenu)
{
    TopMenu topmenu = TopMenu.FromHandle(aTopMenu);
    if (topmenu == g_adminMenu)
    {
        return;
    }
    g_adminMenu = topmenu;
    TopMenuObject category = g_adminMenu.AddCategory("synelo", AdminMenu_Category,
        "sm_synelo_status", ADMFLAG_GENERIC);
    g_adminMenu.AddItem("synelo_scramble", AdminMenu_Scramble, category, "sm_synelo_scramble",
        ADMFLAG_GENERIC);
    g_adminMenu.AddItem("synelo_status", AdminMenu_Status, category, "sm_synelo_status",
        ADMFLAG_GENERIC);
    g_adminMenu.AddItem("synelo_rating", AdminMenu_Rating, category, "sm_synelo_rating",
        ADMFLAG_GENERIC);
}

public void OnLibraryRemoved(const char[] name)
{
    if (StrEqual(name, "adminmenu"))
    {
        g_adminMenu = null;
    }
}

public void AdminMenu_Category(TopMenu topmenu, TopMenuAction action, TopMenuObject object_id,
    int param, char[] buffer, int maxlength)
{
    if (action == TopMenuAction_DisplayTitle || action == TopMenuAction_DisplayOption)
    {
        FormatEx(buffer, maxlength, "%T", "Synelo Menu Category", param);
    }
}

public void AdminMenu_Scramble(TopMenu topmenu, TopMenuAction action, TopMenuObject object_id,
    int param, char[] buffer, int maxlength)
{
    if (action == TopMenuAction_DisplayOption)
    {
        FormatEx(buffer, maxlength, "%T", "Synelo Menu Scramble", param);
    }
    else if (action == TopMenuAction_SelectOption)
    {
        FakeClientCommand(param, "sm_synelo_scramble");
    }
}

public void AdminMenu_Status(TopMenu topmenu, TopMenuAction action, TopMenuObject object_id,
    int param, char[] buffer, int maxlength)
{
    if (action == TopMenuAction_DisplayOption)
    {
        FormatEx(buffer, maxlength, "%T", "Synelo Menu Status", param);
    }
    else if (action == TopMenuAction_SelectOption)
    {
        FakeClientCommand(param, "sm_synelo_status");
    }
}

public void AdminMenu_Rating(TopMenu topmenu, TopMenuAction action, TopMenuObject object_id,
    int param, char[] buffer, int maxlength)
{
    if (action == TopMenuAction_DisplayOption)
    {
        FormatEx(buffer, maxlength, "%T", "Synelo Menu Rating", param);
    }
    else if (action == TopMenuAction_SelectOption)
    {
        Menu menu = new Menu(MenuHandler_RatingTarget);
        menu.SetTitle("%T", "Synelo Menu Rating", param);
        menu.ExitBackButton = true;
        AddTargetsToMenu2(menu, param, COMMAND_FILTER_NO_BOTS | COMMAND_FILTER_CONNECTED);
        menu.Display(param, MENU_TIME_FOREVER);
    }
}

public int MenuHandler_RatingTarget(Menu menu, MenuAction action, int param1, int param2)
{
    if (action == MenuAction_End)
    {
        delete menu;
    }
    else if (action == MenuAction_Cancel)
    {
        if (param2 == MenuCancel_ExitBack && g_adminMenu != null)
        {
            g_adminMenu.Display(param1, TopMenuPosition_LastCategory);
        }
    }
    else if (action == MenuAction_Select)
    {
        char info[16];
        menu.GetItem(param2, info, sizeof(info));
        int target = GetClientOfUserId(StringToInt(info));
        if (target > 0)
        {
            FakeClientCommand(param1, "sm_synelo_rating #%d", GetClientUserId(target));
        }
    }
    return 0;
}
