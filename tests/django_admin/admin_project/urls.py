from django.contrib import admin
from django.urls import path

from memora_ogm.contrib.django.admin import MemoryGraphAdmin
from memora_ogm.contrib.django.models import MemoryGraph

#: A second admin site of the project's own: the pages work on any AdminSite.
other = admin.AdminSite(name="other")
other.register(MemoryGraph, MemoryGraphAdmin)

urlpatterns = [path("admin/", admin.site.urls), path("other-admin/", other.urls)]
