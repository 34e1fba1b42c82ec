from django.urls import path

from memory_api import views

USER = "orgs/<str:org_id>/users/<str:user_id>"

urlpatterns = [
    path("orgs", views.organizations),
    path("orgs/<str:org_id>/agents", views.agents),
    path("orgs/<str:org_id>/users", views.users),
    path(USER, views.user),
    path(f"{USER}/interactions", views.interactions),
    path(f"{USER}/interactions/<str:interaction_id>", views.interaction),
    path(f"{USER}/memories", views.memories),
    path(f"{USER}/timeline", views.timeline),
]
